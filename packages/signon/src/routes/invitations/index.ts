import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { inspectAccountLink } from "../../accounts/account-links.js";
import { acceptInvitation } from "../../accounts/invitations.js";
import { startSession } from "../../accounts/sessions.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { readSessionCookie, setSessionCookie } from "../../http/session-cookie.js";
import { setSessionFlash } from "../../repositories/sessions.js";
import { sha256Hex } from "../../security/random.js";
import { renderPage } from "../../web/page.js";
import { sendUnusableLinkPage } from "../account/unusable-link.js";

// `_csrf` is optional in the schemas so that a form without it gets the CSRF check's 403, not a 400.
const TokenParams = Type.Object({ token: Type.String({ maxLength: 200 }) });
const AcceptBody = Type.Object(
  {
    _csrf: Type.Optional(Type.String({ maxLength: 256 })),
    password: Type.String({ maxLength: 1024 }),
    confirmation: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: false },
);

/**
 * `GET /invitations/:token` shows the "choose your password" form of an
 * invitation; `POST` sets the password, signs the person in and opens the
 * dashboard. Unknown links get a 404 page, expired or used ones a 410 page.
 */
const invitationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/invitations/:token", { config: { errorFormat: "html" }, schema: { params: TokenParams } }, async (request, reply) => {
    const found = await inspectAccountLink(app.signon, request.params.token, "invitation");
    if (found.state !== "usable") return sendUnusableLinkPage(request, reply, found.state, "invitation");
    return renderPage(request, reply, "invitations/accept.eta", {
      title: "Choose your password",
      name: found.user.name,
      email: found.user.email,
      token: request.params.token,
      errors: {},
    });
  });

  app.post(
    "/invitations/:token",
    {
      config: { errorFormat: "html" },
      schema: { params: TokenParams, body: AcceptBody },
      preValidation: requireFormBody,
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      const origin = requestOrigin(request);
      const { token } = request.params;
      const result = await acceptInvitation(app.signon, token, { password: request.body.password, confirmation: request.body.confirmation }, origin);
      if (!result.ok && "link" in result) return sendUnusableLinkPage(request, reply, result.link, "invitation");
      if (!result.ok) {
        const found = await inspectAccountLink(app.signon, token, "invitation");
        if (found.state !== "usable") return sendUnusableLinkPage(request, reply, found.state, "invitation");
        return renderPage(
          request,
          reply,
          "invitations/accept.eta",
          { title: "Choose your password", name: found.user.name, email: found.user.email, token, errors: result.errors },
          400,
        );
      }
      const user = result.user;
      const sessionId = await startSession(app.signon, user, readSessionCookie(request, app.signon.config), origin, {
        awaitingSecondFactor: user.otpEnabledAt !== null,
      });
      setSessionCookie(reply, app.signon.config, sessionId);
      await setSessionFlash(app.signon.db, sha256Hex(sessionId), { kind: "success", text: "Your password is set. Welcome to Tessera Sign-on." });
      return reply.redirect("/", 303);
    },
  );
};

export default invitationRoutes;
