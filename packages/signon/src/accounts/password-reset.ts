import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { sendMailInBackground } from "../mail/send-mail.js";
import { pushesCommitted } from "../pushes/queue.js";
import { findUserByEmail } from "../repositories/users.js";
import { recordFailure, secondsUntilAllowed, type FailureLimit } from "../security/failure-limit.js";
import { formatTime } from "../time-format.js";
import { accountLinkLifetimeSeconds, createAccountLink } from "./account-links.js";
import { endSignInsEverywhere } from "./end-sign-ins-everywhere.js";
import { setPasswordThroughLink } from "./link-password.js";
import type { FieldErrors } from "./password-policy.js";

/** S15: password reset requests per IP (every request counts, found or not). */
export const passwordResetPerIpLimit: FailureLimit = { name: "password-reset-ip", maxFailures: 20, windowSeconds: 3600 };
/** At most this many reset mails per account an hour, so nobody can flood someone's inbox. */
export const passwordResetPerAccountLimit: FailureLimit = { name: "password-reset-account", maxFailures: 3, windowSeconds: 3600 };

/** The answer to a reset request: the same for every address, or the wait imposed by the per-IP limit. */
export type PasswordResetRequestResult = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * Handles "forgotten password": mails a single-use link, valid for 6 hours,
 * to the account with this e-mail address, replacing any earlier link. The
 * answer is the same whether or not the account exists; suspended accounts
 * and API users get no mail, and each account gets at most a few an hour.
 * Only the per-IP limit changes the answer (S15). The SMTP send is not
 * awaited, so an existing account is not answered more slowly than an
 * unknown address; a mail that cannot be sent goes to `onMailFailure` (for
 * the log only: the person sees the same answer either way).
 */
export async function requestPasswordReset(
  ctx: SignonContext,
  email: string,
  origin: RequestOrigin,
  onMailFailure: (error: unknown) => void,
): Promise<PasswordResetRequestResult> {
  const now = ctx.now();
  const ipKeys = origin.ip ? [origin.ip] : [];
  const wait = await secondsUntilAllowed(ctx.db, passwordResetPerIpLimit, ipKeys, now);
  if (wait !== null) return { ok: false, retryAfterSeconds: wait };
  await recordFailure(ctx.db, passwordResetPerIpLimit, ipKeys, now);

  const user = await findUserByEmail(ctx.db, email.trim());
  if (!user) return { ok: true };
  const refusal = user.isApiUser ? "api_user" : user.suspendedAt !== null ? "suspended" : null;
  const accountWait = await secondsUntilAllowed(ctx.db, passwordResetPerAccountLimit, [user.uid], now);
  if (refusal !== null || accountWait !== null) {
    await audit(ctx.db, {
      action: "password_reset_requested",
      at: now,
      subjectUid: user.uid,
      origin,
      details: { sent: false, reason: refusal ?? "too_many_requests" },
    });
    return { ok: true };
  }
  await recordFailure(ctx.db, passwordResetPerAccountLimit, [user.uid], now);
  const { token, expiresAt } = await ctx.db.transaction(async (tx) => {
    const link = await createAccountLink(tx, user.uid, "password_reset", now);
    await audit(tx, { action: "password_reset_requested", at: now, subjectUid: user.uid, origin, details: { sent: true } });
    return link;
  });
  const hours = accountLinkLifetimeSeconds.password_reset / 3600;
  await sendMailInBackground(
    ctx,
    {
      to: user.email,
      subject: "Reset your Tessera Sign-on password",
      text: [
        `Hello ${user.name},`,
        "",
        "Someone asked to reset the password of your Tessera Sign-on account. Choose a new password here:",
        "",
        `${ctx.config.publicUrl}/password-reset/${token}`,
        "",
        `The link works once and until ${formatTime(expiresAt)} (${hours} hours).`,
        "If you did not ask for this, you can ignore this e-mail: your password stays as it is.",
      ].join("\n"),
    },
    onMailFailure,
  );
  return { ok: true };
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
    await endSignInsEverywhere(tx, { user, cause: "password_reset", now, actorUid: user.uid, origin });
  });
  if (result.ok) pushesCommitted(ctx);
  return result.ok ? { ok: true } : result;
}
