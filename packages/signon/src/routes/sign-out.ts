import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { endSession } from "../accounts/sessions.js";
import { requireFormBody } from "../http/form-content-type.js";
import { requestOrigin } from "../http/request-origin.js";
import { clearSessionCookie, readSessionCookie } from "../http/session-cookie.js";

const SignOutBody = Type.Object({ _csrf: Type.String({ maxLength: 256 }) }, { additionalProperties: false });

/** `POST /sign-out`: ends the session. */
const signOutRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    "/sign-out",
    { config: { errorFormat: "html" }, schema: { body: SignOutBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      await endSession(app.signon, readSessionCookie(request, app.signon.config), requestOrigin(request));
      clearSessionCookie(reply, app.signon.config);
      return reply.redirect("/sign-in", 303);
    },
  );
};

export default signOutRoutes;
