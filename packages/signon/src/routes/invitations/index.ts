import { type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { acceptInvitation } from "../../accounts/invitations.js";
import { startSession } from "../../accounts/sessions.js";
import { hasSecondFactor } from "../../accounts/two-step-mandate.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { readSessionCookie, setSessionCookie } from "../../http/session-cookie.js";
import { setSessionFlash } from "../../repositories/sessions.js";
import { sha256Hex } from "../../security/random.js";
import { LinkTokenParams, NewPasswordBody, newPasswordFormAnswer, sendNewPasswordForm } from "../account/new-password-form.js";
import { sendUnusableLinkPage } from "../account/unusable-link.js";

/**
 * `GET /invitations/:token` shows the "choose your password" form of an
 * invitation; `POST` sets the password, signs the person in and opens the
 * dashboard. Unknown links get a 404 page, expired or used ones a 410 page.
 */
const invitationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/invitations/:token", { config: { errorFormat: "html" }, schema: { params: LinkTokenParams } }, async (request, reply) =>
    sendNewPasswordForm(request, reply, request.params.token, "invitation"),
  );

  app.post(
    "/invitations/:token",
    {
      config: { errorFormat: "html", overLong: newPasswordFormAnswer("invitation") },
      schema: { params: LinkTokenParams, body: NewPasswordBody },
      preValidation: requireFormBody,
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      const origin = requestOrigin(request);
      const { token } = request.params;
      const result = await acceptInvitation(app.signon, token, { password: request.body.password, confirmation: request.body.confirmation }, origin);
      if (!result.ok && "link" in result) return sendUnusableLinkPage(request, reply, result.link, "invitation");
      if (!result.ok) return sendNewPasswordForm(request, reply, token, "invitation", result.errors);
      const user = result.user;
      const sessionId = await startSession(app.signon, user, readSessionCookie(request, app.signon.config), origin, {
        awaitingSecondFactor: hasSecondFactor(user),
      });
      setSessionCookie(reply, app.signon.config, sessionId);
      await setSessionFlash(app.signon.db, sha256Hex(sessionId), { kind: "success", text: "Your password is set. Welcome to Tessera Sign-on." });
      return reply.redirect("/", 303);
    },
  );
};

export default invitationRoutes;
