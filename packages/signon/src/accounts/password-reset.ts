import { audit } from "../audit.js";
import { runInBackground } from "../background-work.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { sendMail, type MailMessage } from "../mail/send-mail.js";
import { pushesCommitted } from "../pushes/queue.js";
import { findLatestUnusedAccountLink } from "../repositories/account-links.js";
import { findUserByEmail, type User } from "../repositories/users.js";
import { recordFailure, type FailureLimit } from "../security/failure-limit.js";
import { createAccountLink } from "./account-links.js";
import { endSignInsEverywhere } from "./end-sign-ins-everywhere.js";
import { setPasswordThroughLink } from "./link-password.js";
import type { FieldErrors } from "./password-policy.js";
import { expiredInvitationMail, invitationAgainMail, resetLinkMail, suspendedAccountMail } from "./password-reset-mails.js";
import { whomToAsk } from "./whom-to-ask.js";

/** S15: password reset requests per IP (every request counts, found or not). */
export const passwordResetPerIpLimit: FailureLimit = { name: "password-reset-ip", maxFailures: 20, windowSeconds: 3600 };
/** At most this many reset mails per account an hour, so nobody can flood someone's inbox. */
export const passwordResetPerAccountLimit: FailureLimit = { name: "password-reset-account", maxFailures: 3, windowSeconds: 3600 };

/** The answer to a reset request: the same for every address, or the wait imposed by the per-IP limit. */
export type PasswordResetRequestResult = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * Handles "forgotten password". The answer is the same whether or not the
 * account exists, and whatever mail is sent; only the per-IP limit changes
 * it (S15). The account with this e-mail address gets at most a few mails an
 * hour, each one of:
 *
 * - a single-use link, valid for 6 hours, replacing any earlier one;
 * - for a suspended account, why its password cannot be reset and whom to
 *   ask to lift the suspension, with no link;
 * - for someone invited who has not accepted yet, their invitation link
 *   again (a new link in place of the old one, working until the invitation
 *   would have ended), or, once the invitation has expired, whom to ask for
 *   a new one.
 *
 * API users get no mail. Only the per-IP limit is checked before the
 * answer; everything that depends on the address (finding the account, its
 * own limit, the link, the event and the mail) runs once the answer has been
 * written, so the answer does the same work whatever the address (its time
 * says nothing of whether an account exists), whatever the mail server does. A failure there goes to
 * `onFailure` (for the log only: the person sees the same answer either way).
 */
export async function requestPasswordReset(
  ctx: SignonContext,
  email: string,
  origin: RequestOrigin,
  onFailure: (error: unknown) => void,
): Promise<PasswordResetRequestResult> {
  const now = ctx.now();
  const ipKeys = origin.ip ? [origin.ip] : [];
  // Counted and decided in one statement, so simultaneous requests cannot all slip under the limit.
  const wait = await recordFailure(ctx.db, passwordResetPerIpLimit, ipKeys, now);
  if (wait !== null) return { ok: false, retryAfterSeconds: wait };
  runInBackground(() => answerResetRequest(ctx, email.trim(), origin, now, onFailure), onFailure);
  return { ok: true };
}

/** The part of a reset request that depends on the address, run after the answer (see `requestPasswordReset`). */
async function answerResetRequest(ctx: SignonContext, email: string, origin: RequestOrigin, now: Date, onMailFailure: (error: unknown) => void): Promise<void> {
  const user = await findUserByEmail(ctx.db, email);
  if (!user) return;
  const refusal = user.isApiUser ? "api_user" : (await recordFailure(ctx.db, passwordResetPerAccountLimit, [user.uid], now)) !== null ? "too_many_requests" : null;
  if (refusal !== null) {
    await audit(ctx.db, { action: "password_reset_requested", at: now, subjectUid: user.uid, origin, details: { sent: false, reason: refusal } });
    return;
  }
  const message = await resetAnswerMail(ctx, user, now, origin);
  await sendMail(ctx, message).catch(onMailFailure);
}

/** What a reset request mails to `user` (see `requestPasswordReset`), with the link it needs and the audit event, stored. */
async function resetAnswerMail(ctx: SignonContext, user: User, now: Date, origin: RequestOrigin): Promise<MailMessage> {
  if (user.suspendedAt !== null) {
    await audit(ctx.db, { action: "password_reset_requested", at: now, subjectUid: user.uid, origin, details: { sent: true, mail: "suspended" } });
    return suspendedAccountMail(user, await whomToAsk(ctx, user));
  }
  if (user.passwordHash === null && user.invitationSentAt !== null) {
    const invitation = await findLatestUnusedAccountLink(ctx.db, user.uid, "invitation");
    if (invitation === null || invitation.expiresAt.getTime() <= now.getTime()) {
      await audit(ctx.db, { action: "password_reset_requested", at: now, subjectUid: user.uid, origin, details: { sent: true, mail: "invitation_expired" } });
      return expiredInvitationMail(user, await whomToAsk(ctx, user));
    }
    const link = await ctx.db.transaction(async (tx) => {
      // The invitation keeps its end: asking again does not lengthen it.
      const fresh = await createAccountLink(tx, user.uid, "invitation", now, invitation.expiresAt);
      await audit(tx, { action: "password_reset_requested", at: now, subjectUid: user.uid, origin, details: { sent: true, mail: "invitation" } });
      return fresh;
    });
    return invitationAgainMail(ctx, user, link);
  }
  const link = await ctx.db.transaction(async (tx) => {
    const fresh = await createAccountLink(tx, user.uid, "password_reset", now);
    await audit(tx, { action: "password_reset_requested", at: now, subjectUid: user.uid, origin, details: { sent: true } });
    return fresh;
  });
  return resetLinkMail(ctx, user, link);
}

export type PasswordResetResult = { ok: true } | { ok: false; errors: FieldErrors } | { ok: false; link: "unknown" | "expired" | "used" };

/**
 * Sets a new password through a reset link: checks it against the policy,
 * stores it (and its history), uses up the link, lifts any lock and ends
 * every sign-in of the user (S18: every session, every application's
 * tokens, reauth pushed), in one transaction.
 */
export async function resetPassword(
  ctx: SignonContext,
  token: string,
  form: { password: string; confirmation: string },
  origin: RequestOrigin,
): Promise<PasswordResetResult> {
  const result = await setPasswordThroughLink(ctx, token, "password_reset", form, origin, async (tx, user, now) => {
    await audit(tx, { action: "password_reset", at: now, actorUid: user.uid, subjectUid: user.uid, origin });
    await endSignInsEverywhere(tx, { user, cause: "password_reset", now, fanOut: ctx.config.pushes.fanOut, actorUid: user.uid, origin });
  });
  if (result.ok) pushesCommitted(ctx);
  return result.ok ? { ok: true } : result;
}
