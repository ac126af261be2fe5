import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { clearPasswordFailures, findUserByEmail, recordWrongPassword, type User } from "../repositories/users.js";
import { recordFailure, secondsUntilAllowed, signInPerIpLimit } from "../security/failure-limit.js";
import { verifyPassword } from "./password.js";

/** An account locks after this many wrong passwords in a row (S15). */
export const wrongPasswordsBeforeLock = 6;
/** A lock lifts by itself after an hour, or earlier when an administrator unlocks it (S15). */
export const lockSeconds = 3600;

export type SignInResult =
  | { ok: true; user: User }
  | { ok: false; reason: "invalid" | "locked" | "suspended" }
  | { ok: false; reason: "rate_limited"; retryAfterSeconds: number };

/**
 * Checks an e-mail address and password. Wrong passwords count towards the
 * account lock and the per-IP limit; the same message covers an unknown
 * e-mail and a wrong password.
 */
export async function signInWithPassword(
  ctx: SignonContext,
  credentials: { email: string; password: string },
  origin: RequestOrigin,
): Promise<SignInResult> {
  const now = ctx.now();
  const ipKeys = origin.ip ? [origin.ip] : [];
  const wait = await secondsUntilAllowed(ctx.db, signInPerIpLimit, ipKeys, now);
  if (wait !== null) return { ok: false, reason: "rate_limited", retryAfterSeconds: wait };

  const user = await findUserByEmail(ctx.db, credentials.email);
  const candidate = user && !user.isApiUser ? user : null;
  const correct = await verifyPassword(candidate?.passwordHash ?? null, credentials.password, ctx.config.passwordHashing);
  const locked = candidate?.lockedAt != null && candidate.lockedAt.getTime() + lockSeconds * 1000 > now.getTime();

  if (candidate && locked) {
    await audit(ctx.db, { action: "sign_in_refused", at: now, subjectUid: candidate.uid, origin, details: { reason: "locked" } });
    return { ok: false, reason: "locked" };
  }
  if (!candidate || !correct) {
    await recordFailure(ctx.db, signInPerIpLimit, ipKeys, now);
    if (!candidate) {
      await audit(ctx.db, { action: "sign_in_failed", at: now, origin, details: { reason: "unknown_email" } });
      return { ok: false, reason: "invalid" };
    }
    return ctx.db.transaction(async (tx) => {
      // A lock that has run out starts a fresh count.
      if (candidate.lockedAt !== null) await clearPasswordFailures(tx, candidate.uid, now);
      const updated = await recordWrongPassword(tx, candidate.uid, wrongPasswordsBeforeLock, now);
      await audit(tx, { action: "sign_in_failed", at: now, subjectUid: candidate.uid, origin, details: { reason: "wrong_password" } });
      if (updated?.lockedAt != null) {
        await audit(tx, { action: "account_locked", at: now, subjectUid: candidate.uid, origin });
        return { ok: false, reason: "locked" } as const;
      }
      return { ok: false, reason: "invalid" } as const;
    });
  }
  if (candidate.suspendedAt !== null) {
    await audit(ctx.db, { action: "sign_in_refused", at: now, subjectUid: candidate.uid, origin, details: { reason: "suspended" } });
    return { ok: false, reason: "suspended" };
  }
  if (candidate.failedPasswordAttempts > 0 || candidate.lockedAt !== null) await clearPasswordFailures(ctx.db, candidate.uid, now);
  return { ok: true, user: candidate };
}
