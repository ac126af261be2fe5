import type { SignonContext } from "../context.js";
import type { MailMessage } from "../mail/send-mail.js";
import type { User } from "../repositories/users.js";
import { formatTime } from "../time-format.js";
import { accountLinkLifetimeSeconds } from "./account-links.js";
import { whomToAskLines, type WhomToAsk } from "./whom-to-ask.js";

/*
 * The mails a password reset request sends (`password-reset.ts` picks one).
 * Each goes to the account's own address only, so it may say what the page,
 * the same for every address, does not.
 */

const ignoreIfNotAsked = "If you did not ask for this, you can ignore this e-mail.";

/** The ordinary answer: a link to choose a new password. */
export function resetLinkMail(ctx: SignonContext, user: User, link: { token: string; expiresAt: Date }): MailMessage {
  const hours = accountLinkLifetimeSeconds.password_reset / 3600;
  return {
    to: user.email,
    subject: "Reset your Tessera Sign-on password",
    text: [
      `Hello ${user.name},`,
      "",
      "Someone asked to reset the password of your Tessera Sign-on account. Choose a new password here:",
      "",
      `${ctx.config.publicUrl}/password-reset/${link.token}`,
      "",
      `The link works once and until ${formatTime(link.expiresAt)} (${hours} hours).`,
      "If you did not ask for this, you can ignore this e-mail: your password stays as it is.",
    ].join("\n"),
  };
}

/** To a suspended person: no link (a new password would not let them in), and whom to ask to lift the suspension. */
export function suspendedAccountMail(user: User, helpers: WhomToAsk): MailMessage {
  return {
    to: user.email,
    subject: "Your Tessera Sign-on account is suspended",
    text: [
      `Hello ${user.name},`,
      "",
      "Someone asked to reset the password of your Tessera Sign-on account. Your account is suspended, so it cannot be used to sign in and its password cannot be reset.",
      "",
      ...whomToAskLines(helpers, "lift the suspension"),
      "",
      ignoreIfNotAsked,
    ].join("\n"),
  };
}

/** To someone invited who has not accepted yet: their invitation link again, not a reset link (accepting grants the invitation's permissions). */
export function invitationAgainMail(ctx: SignonContext, user: User, link: { token: string; expiresAt: Date }): MailMessage {
  return {
    to: user.email,
    subject: "Your invitation to Tessera Sign-on",
    text: [
      `Hello ${user.name},`,
      "",
      "Someone asked to reset the password of your Tessera Sign-on account. You have not accepted your invitation yet, so there is no password to reset. Accept the invitation and choose your password here:",
      "",
      `${ctx.config.publicUrl}/invitations/${link.token}`,
      "",
      `The link works once and until ${formatTime(link.expiresAt)}, when your invitation ends. The link in earlier invitation e-mails no longer works.`,
      ignoreIfNotAsked,
    ].join("\n"),
  };
}

/** To someone whose invitation expired before they accepted it: whom to ask for a new one. */
export function expiredInvitationMail(user: User, helpers: WhomToAsk): MailMessage {
  return {
    to: user.email,
    subject: "Your invitation to Tessera Sign-on has expired",
    text: [
      `Hello ${user.name},`,
      "",
      "Someone asked to reset the password of your Tessera Sign-on account. You were invited but did not accept the invitation in time, so there is no password to reset and the invitation no longer works.",
      "",
      ...whomToAskLines(helpers, "send you a new invitation"),
      "",
      ignoreIfNotAsked,
    ].join("\n"),
  };
}
