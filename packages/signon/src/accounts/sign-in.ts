import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { findUserByEmail, type User } from "../repositories/users.js";
import { recordFailure, secondsUntilAllowed, signInPerIpLimit } from "../security/failure-limit.js";
import { replaceImportedPasswordHash } from "../repositories/password-history.js";
import { hashPassword, needsRehash, verifyPassword } from "./password.js";
import { clearSourceFailures, countSignInFailureFor, isLocked, normaliseEmail, secondsUntilSignInAllowed } from "./sign-in-limits.js";

export { lockSeconds } from "./sign-in-limits.js";

/**
 * What a sign-in with a password gave. `invalid` covers an unknown address,
 * a wrong password and a locked account alike (S15): the answer must not
 * tell them apart. `refused` is a source refused for this address after too
 * many failures (the same words, with 429); `rate_limited` is the per-IP
 * limit for every address.
 */
export type SignInResult =
  | { ok: true; user: User }
  | { ok: false; reason: "invalid" | "suspended" | "new_password_required" }
  | { ok: false; reason: "refused" | "rate_limited"; retryAfterSeconds: number };

/**
 * Checks an e-mail address and password (S15). Whatever the address, the
 * same work is done: the account is looked up, the password checked against
 * its hash or a dummy one, and a failure counted under the submitted
 * address (normalised) and the source address, so that an unknown address,
 * a wrong password and a locked account get the same answer in the same
 * time. A right password for a locked account is a failure too; only a
 * right password for an account that is not locked tells anything (that
 * it is suspended, or signs in).
 */
export async function signInWithPassword(
  ctx: SignonContext,
  credentials: { email: string; password: string },
  origin: RequestOrigin,
  onMailFailure: (error: unknown) => void = () => undefined,
): Promise<SignInResult> {
  const now = ctx.now();
  const ipKeys = origin.ip ? [origin.ip] : [];
  const wait = await secondsUntilAllowed(ctx.db, signInPerIpLimit, ipKeys, now);
  if (wait !== null) return { ok: false, reason: "rate_limited", retryAfterSeconds: wait };
  const refusedFor = await secondsUntilSignInAllowed(ctx, credentials.email, origin, now);
  if (refusedFor !== null) return { ok: false, reason: "refused", retryAfterSeconds: refusedFor };

  const user = await findUserByEmail(ctx.db, normaliseEmail(credentials.email));
  const candidate = user && !user.isApiUser ? user : null;
  const correct = await verifyPassword(candidate?.passwordHash ?? null, credentials.password, ctx.config.passwordHashing);
  const locked = candidate !== null && isLocked(candidate, now);

  if (!candidate || !correct || locked) {
    await recordFailure(ctx.db, signInPerIpLimit, ipKeys, now);
    const reason = !candidate ? "unknown_email" : locked ? "locked" : "wrong_password";
    await audit(ctx.db, {
      action: locked ? "sign_in_refused" : "sign_in_failed",
      at: now,
      subjectUid: candidate?.uid ?? null,
      origin,
      details: { reason },
    });
    // The failure that reaches a limit gets the usual answer too; the next one is refused.
    await countSignInFailureFor(ctx, { email: credentials.email, kind: "password", origin, now }, onMailFailure);
    return { ok: false, reason: "invalid" };
  }
  if (candidate.suspendedAt !== null) {
    await audit(ctx.db, { action: "sign_in_refused", at: now, subjectUid: candidate.uid, origin, details: { reason: "suspended" } });
    return { ok: false, reason: "suspended" };
  }
  if (candidate.newPasswordRequired) {
    await audit(ctx.db, { action: "sign_in_refused", at: now, subjectUid: candidate.uid, origin, details: { reason: "new_password_required" } });
    return { ok: false, reason: "new_password_required" };
  }
  await clearSourceFailures(ctx.db, candidate.email, origin, "password");
  // A hash imported from Signon is replaced with Sign-on's own as soon as the password is known.
  if (candidate.passwordHash !== null && needsRehash(candidate.passwordHash)) {
    await replaceImportedPasswordHash(ctx.db, candidate.uid, candidate.passwordHash, await hashPassword(credentials.password, ctx.config.passwordHashing), now);
  }
  return { ok: true, user: candidate };
}
