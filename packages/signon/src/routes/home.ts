import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { resolveSession } from "../accounts/sessions.js";
import { readSessionCookie } from "../http/session-cookie.js";

/** `GET /`: who is signed in, with a sign-out button. */
const homeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/", { config: { errorFormat: "html" } }, async (request, reply) => {
    const user = await resolveSession(app.signon, readSessionCookie(request, app.signon.config));
    return reply.header("cache-control", "no-store").view("home.eta", {
      title: "Home",
      user: user ? { name: user.name, email: user.email } : null,
      csrfToken: user ? reply.generateCsrf() : "",
    });
  });
};

export default homeRoutes;
