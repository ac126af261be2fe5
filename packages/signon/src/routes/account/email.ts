import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { cancelEmailChange, confirmEmailChange, inspectEmailChange, requestOwnEmailChange } from "../../accounts/email-change.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { mailErrorForLog } from "../../mail/send-mail.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { requireSignedIn, signedInUser } from "../../web/signed-in.js";
import { formatTime } from "../users/format.js";
import { renderAccountPage } from "./account-page.js";
import { LinkTokenParams } from "./new-password-form.js";
import { sendUnusableLinkPage } from "./unusable-link.js";

// `_csrf` is optional in the schemas so that a form without it gets the CSRF check's 403, not a 400.
const EmailChangeBody = Type.Object(
  { _csrf: Type.Optional(Type.String({ maxLength: 256 })), email: Type.String({ maxLength: 254 }), current: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);
const CsrfOnlyBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: false });

const emailChangeAnswer = overLongAnswer(EmailChangeBody, { email: "an e-mail address", current: "your current password" }, (request, reply, body, errors) =>
  renderAccountPage(request, reply, signedInUser(request), { email: { values: { email: body.email }, errors } }, 400),
);

const anotherPerson = {
  title: "This link is for another account",
  message: "The link confirms a new e-mail address for someone else's account, and you are signed in as yourself.",
  nextStep: "Sign out, then follow the link again and sign in as the person it was sent to.",
  nextHref: "/account",
  nextLabel: "Go to your account",
};

/**
 * Changing your own e-mail address safely: `POST /account/email` asks for a
 * new address with the current password and mails a confirmation link to
 * it; `POST /account/email/cancel` drops the pending change;
 * `GET /account/email/:token` (the link) asks the signed-in person to
 * confirm, so that a mail scanner fetching it changes nothing, and
 * `POST /account/email/:token` applies the change. Following the link needs
 * the person signed in as themselves: whoever holds only the new mailbox
 * cannot take the account, and whoever holds only a session cannot either.
 */
const emailChangeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    "/account/email",
    {
      config: { errorFormat: "html", overLong: emailChangeAnswer },
      schema: { body: EmailChangeBody },
      preValidation: requireFormBody,
      preHandler: [requireSignedIn, app.csrfProtection],
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const result = await requestOwnEmailChange(app.signon, user, { email: request.body.email, current: request.body.current }, requestOrigin(request), (error) =>
        request.log.error({ mailError: mailErrorForLog(error) }, "e-mail change mail could not be sent"),
      );
      if (!result.ok) return renderAccountPage(request, reply, user, { email: { values: { email: request.body.email.trim() }, errors: result.errors } }, 400);
      return redirectWithFlash(request, reply, "/account", {
        kind: "success",
        text: `We have sent a confirmation link to ${result.newEmail}. Your e-mail address changes when you follow it.`,
      });
    },
  );

  app.post(
    "/account/email/cancel",
    {
      config: { errorFormat: "html" },
      schema: { body: CsrfOnlyBody },
      preValidation: requireFormBody,
      preHandler: [requireSignedIn, app.csrfProtection],
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const cancelled = await cancelEmailChange(app.signon, user, user.uid, requestOrigin(request));
      const text = cancelled ? "The change of your e-mail address is cancelled; its link no longer works." : "There was no pending change of your e-mail address.";
      return redirectWithFlash(request, reply, "/account", { kind: "success", text });
    },
  );

  app.get(
    "/account/email/:token",
    { config: { errorFormat: "html" }, schema: { params: LinkTokenParams }, preHandler: requireSignedIn },
    async (request, reply) => {
      const { token } = request.params;
      const found = await inspectEmailChange(app.signon, token);
      if (found.state !== "usable") return sendUnusableLinkPage(request, reply, found.state, "email_change");
      if (found.user.uid !== signedInUser(request).uid) return renderPage(request, reply, "account/link-unusable.eta", anotherPerson, 403);
      return renderPage(request, reply, "account/confirm-email.eta", {
        title: "Confirm your new e-mail address",
        from: found.user.email,
        to: found.change.newEmail,
        until: formatTime(found.change.expiresAt),
        token,
      });
    },
  );

  app.post(
    "/account/email/:token",
    {
      config: { errorFormat: "html" },
      schema: { params: LinkTokenParams, body: CsrfOnlyBody },
      preValidation: requireFormBody,
      preHandler: [requireSignedIn, app.csrfProtection],
    },
    async (request, reply) => {
      const session = request.webSession;
      if (!session) throw new Error("requireSignedIn set no session");
      const result = await confirmEmailChange(app.signon, request.params.token, session, requestOrigin(request));
      if (result.ok) {
        return redirectWithFlash(request, reply, "/account", {
          kind: "success",
          text: `Your e-mail address is now ${result.user.email}. You are signed out everywhere else.`,
        });
      }
      if ("link" in result) return sendUnusableLinkPage(request, reply, result.link, "email_change");
      if (result.refused === "another_person") return renderPage(request, reply, "account/link-unusable.eta", anotherPerson, 403);
      return renderPage(
        request,
        reply,
        "account/link-unusable.eta",
        {
          title: "This e-mail address is taken",
          message: "Another account started using this e-mail address after the change was asked for. Your address has not changed.",
          nextStep: "You can cancel the pending change on your account page and ask for another address.",
          nextHref: "/account",
          nextLabel: "Go to your account",
        },
        409,
      );
    },
  );
};

export default emailChangeRoutes;
