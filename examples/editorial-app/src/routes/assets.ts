import type { FastifyInstance } from "fastify";

const stylesheet = `*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; font-family: Georgia, "Times New Roman", serif; line-height: 1.5; color: #1f1f1f; background: #faf8f3; }
a { color: #8a2b06; }
a:focus { outline: 3px solid #f5b700; outline-offset: 0; }
header.site { background: #3b1f0e; color: #fff; padding: .75rem 1rem; }
header.site .bar { max-width: 56rem; margin: 0 auto; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; }
header.site a { color: #fff; }
header.site .name { font-size: 1.3rem; font-weight: 700; text-decoration: none; letter-spacing: .02em; }
header.site nav ul { list-style: none; margin: 0; padding: 0; display: flex; gap: 1rem; }
header.site .account { margin: 0 0 0 auto; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
main { max-width: 56rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 2rem; line-height: 1.2; margin: 0 0 1rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dt { font-weight: 700; }
dd { margin: 0; overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .5rem; border-bottom: 1px solid #c9c2b3; vertical-align: top; }
code { font-family: ui-monospace, monospace; background: #efe9dc; padding: 0 .2rem; }
.way-back { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; }
footer.site { max-width: 56rem; margin: 3rem auto 1rem; padding: 0 1rem; color: #5c554a; font-size: .9rem; }
`;

/** `GET /assets/editorial.css`: the application's stylesheet, cached for a day. */
export async function assetRoutes(app: FastifyInstance): Promise<void> {
  app.get("/assets/editorial.css", async (_request, reply) =>
    reply.type("text/css; charset=utf-8").header("cache-control", "public, max-age=86400").send(stylesheet),
  );
}
