import type { FastifyInstance } from "fastify";
import { escapeHtml, page } from "../views/layout.js";

/** `GET /`: who you are, as Sign-on told this application, and your permissions here. */
export async function homeRoutes(app: FastifyInstance): Promise<void> {
  app.get("/", { preHandler: app.signonClient.requireSignIn }, async (request, reply) => {
    const user = request.signonUser;
    if (!user) throw new Error("requireSignIn let a signed-out request through");
    const permissions = user.permissions.map((p) => `<li><code>${escapeHtml(p)}</code></li>`).join("");
    const organisation = user.organisationSlug ?? "none";
    const body = `<dl>
<dt>Name</dt><dd id="name">${escapeHtml(user.name)}</dd>
<dt>E-mail</dt><dd id="email">${escapeHtml(user.email)}</dd>
<dt>Organisation</dt><dd id="organisation">${escapeHtml(organisation)}</dd>
<dt>Sign-on uid</dt><dd id="uid"><code>${escapeHtml(user.uid)}</code></dd>
</dl>
<h2>Your permissions in this application</h2>
<ul id="permissions">${permissions}</ul>`;
    return reply.type("text/html; charset=utf-8").header("cache-control", "no-store").send(page("Who you are", body, user.name));
  });
}
