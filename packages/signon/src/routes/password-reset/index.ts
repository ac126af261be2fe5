import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { requestPasswordReset, resetPassword } from "../../accounts/password-reset.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { mailErrorForLog } from "../../mail/send-mail.js";
import { clearSessionCookie } from "../../http/session-cookie.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { renderPage } from "../../web/page.js";
import { LinkTokenParams, NewPasswordBody, newPasswordFormAnswer, sendNewPasswordForm } from "../account/new-password-form.js";
import { sendUnusableLinkPage } from "../account/unusable-link.js";

// `_csrf` is optional in the schema so that a form without it gets the CSRF check's 403, not a 400.
const RequestBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })), email: Type.String({ maxLength: 254 }) }, { additionalProperties: false });

const emailShape = /^[^\s@]+@[^\s@]+$/;

/** The request form again, with the address as typed and a message by the field. */
const sendRequestForm = (request: FastifyRequest, reply: FastifyReply, email: string, errors: Record<string, string>, status = 400) =>
  renderPage(request, reply, "password-reset/request.eta", { title: "Reset your password", email, errors }, status);

const requestFormAnswer = overLongAnswer(RequestBody, { email: "an e-mail address" }, (request, reply, body, errors) => sendRequestForm(request, reply, body.email, errors));

/**
 * Forgotten password: `GET/POST /password-reset` asks for the e-mail address
 * and answers the same whether or not it has an account; `GET/POST
 * /password-reset/:token` chooses the new password; `GET /password-reset/done`
 * says it worked.
 */
const passwordResetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/password-reset", { config: { errorFormat: "html" } }, async (request, reply) =>
    sendRequestForm(request, reply, "", {}, 200),
  );

  app.post(
    "/password-reset",
    { config: { errorFormat: "html", overLong: requestFormAnswer }, schema: { body: RequestBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const email = request.body.email.trim();
      if (!emailShape.test(email)) {
        return sendRequestForm(request, reply, email, { email: email === "" ? "Enter your e-mail address" : "Enter an e-mail address like name@example.org" });
      }
      // Logged without the address or the mail; the page is the one every request gets.
      const log = request.log;
      const result = await requestPasswordReset(app.signon, email, requestOrigin(request), (error) =>
        log.error({ mailError: mailErrorForLog(error) }, "password reset mail could not be sent"),
      );
      if (!result.ok) {
        reply.header("retry-after", String(Math.ceil(result.retryAfterSeconds)));
        return sendRequestForm(request, reply, email, { email: "Too many requests from your network. Wait a while and try again." }, 429);
      }
      // Redirected, so that reloading the page sends no second mail; the same answer whatever the address.
      return reply.header("cache-control", "no-store").redirect("/password-reset/sent", 303);
    },
  );

  app.get("/password-reset/sent", { config: { errorFormat: "html" } }, async (request, reply) =>
    renderPage(request, reply, "password-reset/sent.eta", { title: "Check your e-mail" }),
  );

  app.get("/password-reset/done", { config: { errorFormat: "html" } }, async (request, reply) =>
    renderPage(request, reply, "password-reset/done.eta", { title: "Your password has been changed" }),
  );

  app.get("/password-reset/:token", { config: { errorFormat: "html" }, schema: { params: LinkTokenParams } }, async (request, reply) =>
    sendNewPasswordForm(request, reply, request.params.token, "password_reset"),
  );

  app.post(
    "/password-reset/:token",
    {
      config: { errorFormat: "html", overLong: newPasswordFormAnswer("password_reset") },
      schema: { params: LinkTokenParams, body: NewPasswordBody },
      preValidation: requireFormBody,
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      const { token } = request.params;
      const result = await resetPassword(app.signon, token, { password: request.body.password, confirmation: request.body.confirmation }, requestOrigin(request));
      if (!result.ok && "link" in result) return sendUnusableLinkPage(request, reply, result.link, "password_reset");
      if (!result.ok) return sendNewPasswordForm(request, reply, token, "password_reset", result.errors);
      clearSessionCookie(reply, app.signon.config);
      return reply.redirect("/password-reset/done", 303);
    },
  );
};

export default passwordResetRoutes;
