import { Type } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { inspectAccountLink, type PasswordLinkPurpose } from "../../accounts/account-links.js";
import { passwordLengths, type FieldErrors } from "../../accounts/password-policy.js";
import { overLongAnswer, type FieldNoun } from "../../web/over-long-fields.js";
import { renderPage } from "../../web/page.js";
import { sendUnusableLinkPage } from "./unusable-link.js";

/** The `:token` of an e-mailed link's address. */
export const LinkTokenParams = Type.Object({ token: Type.String({ maxLength: 200 }) });

/**
 * The body of the "choose your password" form. `_csrf` is optional so that a
 * form without it gets the CSRF check's 403, not a 400.
 */
export const NewPasswordBody = Type.Object(
  {
    _csrf: Type.Optional(Type.String({ maxLength: 256 })),
    password: Type.String({ maxLength: passwordLengths.max }),
    confirmation: Type.String({ maxLength: passwordLengths.max }),
  },
  { additionalProperties: false },
);

/** What the messages call the new password's two fields. */
export const newPasswordNouns: Record<"password" | "confirmation", FieldNoun> = { password: "a password", confirmation: "a password" };

const forms: Record<PasswordLinkPurpose, { view: string; title: string }> = {
  invitation: { view: "invitations/accept.eta", title: "Choose your password" },
  password_reset: { view: "password-reset/choose.eta", title: "Choose a new password" },
};

/** `config.overLong` of the "choose your password" form of an e-mailed link (`:token`): the form again, or the unusable-link page. */
export function newPasswordFormAnswer(purpose: PasswordLinkPurpose) {
  return overLongAnswer(NewPasswordBody, newPasswordNouns, (request, reply, _body, errors) =>
    sendNewPasswordForm(request, reply, (request.params as { token: string }).token, purpose, errors),
  );
}

/**
 * The "choose your password" form that an e-mailed link (invitation or
 * password reset) leads to, answered 400 with the field errors of a refused
 * try; the unusable-link page (404/410) when the link cannot be used.
 */
export async function sendNewPasswordForm(
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  purpose: PasswordLinkPurpose,
  refusedWith?: FieldErrors,
): Promise<FastifyReply> {
  const found = await inspectAccountLink(request.server.signon, token, purpose);
  if (found.state !== "usable") return sendUnusableLinkPage(request, reply, found.state, purpose);
  const form = forms[purpose];
  const data = { title: form.title, name: found.user.name, email: found.user.email, token, errors: refusedWith ?? {} };
  return renderPage(request, reply, form.view, data, refusedWith ? 400 : 200);
}
