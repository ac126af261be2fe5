import type { FastifyInstance } from "fastify";

/**
 * A page's address typed with a trailing slash (`/users/`) goes to the page (`/users`, 308 with the
 * query kept) instead of matching a route with an empty parameter or nothing at all. Only for GET
 * and HEAD, and only when the address without the slash is a page.
 */
export function redirectTrailingSlash(app: FastifyInstance): void {
  app.addHook("onRequest", (request, reply, done) => {
    if (request.method !== "GET" && request.method !== "HEAD") return done();
    const [path = "", query] = request.url.split(/\?(.*)/s, 2);
    if (path.length < 2 || !path.endsWith("/")) return done();
    const bare = path.replace(/\/+$/, "");
    if (bare === "" || !app.hasRoute({ method: "GET", url: bare })) return done();
    void reply.redirect(query === undefined ? bare : `${bare}?${query}`, 308);
  });
}
