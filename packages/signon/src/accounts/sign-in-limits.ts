import { and, eq, isNull, lte, or, sql } from "drizzle-orm";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { SignonDatabase } from "../db/database.js";
import { failureCounters, users } from "../db/schema.js";
import { sendMailInBackground } from "../mail/send-mail.js";
import { deleteUnusedAccountLinks } from "../repositories/account-links.js";
import { countFailure } from "../repositories/failure-counters.js";
import {
  countSignInFailure,
  deleteSignInFailures,
  findSignInBlock,
  listSignInFailures,
  type SignInFailureKind,
  type SignInFailureLimit,
} from "../repositories/sign-in-failures.js";
import type { User } from "../repositories/users.js";
import type { FailureLimit } from "../security/failure-limit.js";
import { formatTime } from "../time-format.js";
import { createAccountLink } from "./account-links.js";

/**
 * S15: 6 wrong passwords for one e-mail address from one source address in
 * an hour, and that source is refused for that address for an hour.
 */
export const wrongPasswordsPerSource: SignInFailureLimit = { maxFailures: 6, windowSeconds: 3600, blockSeconds: 3600 };
/** S15: the same for wrong 2-step codes, after 10. */
export const wrongCodesPerSource: SignInFailureLimit = { maxFailures: 10, windowSeconds: 3600, blockSeconds: 3600 };
/**
 * S15: failures for one e-mail address from every source together; at 30 in
 * an hour the account (if there is one) locks for everyone.
 */
export const failuresBeforeAccountLock: FailureLimit = { name: "sign-in-email", maxFailures: 30, windowSeconds: 3600 };
/** A lock lifts by itself after an hour, or earlier through the unlock link, a password reset or an administrator (S15). */
export const lockSeconds = 3600;

const limits: Record<SignInFailureKind, SignInFailureLimit> = { password: wrongPasswordsPerSource, two_step_code: wrongCodesPerSource };

/** The form of an e-mail address that the counters are kept under: trimmed and in lower case, as e-mail addresses are unique regardless of case. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The source address of a request for the counters: the client address that
 * the trusted-proxy setting decided (`request.ip`), never a header a client
 * can set. Requests whose address could not be read share one count.
 */
export function signInSource(origin: RequestOrigin): string {
  return origin.ip ?? "unknown";
}

/** Whether the account is locked for everyone at `now`. */
export function isLocked(user: Pick<User, "lockedAt">, now: Date): boolean {
  return user.lockedAt !== null && user.lockedAt.getTime() + lockSeconds * 1000 > now.getTime();
}

/** When the lock of a locked account ends. */
export function lockEndsAt(lockedAt: Date): Date {
  return new Date(lockedAt.getTime() + lockSeconds * 1000);
}

/**
 * Seconds until `origin` may try to sign in as `email` again, or `null`
 * when it may now. Looks at the counters only, never at whether an account
 * has the address, so a refusal tells nothing about it.
 */
export async function secondsUntilSignInAllowed(ctx: SignonContext, email: string, origin: RequestOrigin, now: Date): Promise<number | null> {
  const until = await findSignInBlock(ctx.db, normaliseEmail(email), signInSource(origin), now);
  return until === null ? null : Math.max(1, (until.getTime() - now.getTime()) / 1000);
}

/** What one counted failure led to. */
export interface CountedSignInFailure {
  /** This source's failures of this kind for the address in the current window. */
  failures: number;
  /** Set when the source is now refused for the address: seconds until it may try again. */
  retryAfterSeconds: number | null;
}

/**
 * Counts one failed sign-in for the submitted address `email` (whether or
 * not an account has it) from `origin`: under (address, source, kind), and
 * under the address from every source. From the 30th failure in an hour on,
 * the account that has the address, if there is one (not an API user), is
 * locked unless it is already; the owner gets the unlock e-mail once per
 * lock. The same statements run for an address without an account, so the
 * work does not tell them apart.
 */
export async function countSignInFailureFor(
  ctx: SignonContext,
  input: { email: string; kind: SignInFailureKind; origin: RequestOrigin; now: Date },
  onMailFailure: (error: unknown) => void,
): Promise<CountedSignInFailure> {
  const { now, origin, kind } = input;
  const email = normaliseEmail(input.email);
  const counted = await countSignInFailure(ctx.db, { email, source: signInSource(origin), kind }, limits[kind], now);
  const total = await countFailure(ctx.db, `${failuresBeforeAccountLock.name}:${email}`, failuresBeforeAccountLock.windowSeconds, now);
  // Every failure from the 30th on tries the lock (for an address with or without an account alike): a lock that ended meanwhile starts again.
  if (total.failures >= failuresBeforeAccountLock.maxFailures) await lockAccount(ctx, email, total.failures, origin, now, onMailFailure);
  const blocked = counted.blockedUntil !== null && counted.blockedUntil.getTime() > now.getTime();
  return { failures: counted.failures, retryAfterSeconds: blocked && counted.blockedUntil ? (counted.blockedUntil.getTime() - now.getTime()) / 1000 : null };
}

/**
 * Locks the account with the address `email` unless a lock is running, in
 * one statement so that of several instances only one locks it and sends
 * the mail. In the same transaction: the single-use unlock link (valid until
 * the lock ends) and `account_locked` with its causes, the source addresses
 * and their counts.
 */
async function lockAccount(
  ctx: SignonContext,
  email: string,
  failures: number,
  origin: RequestOrigin,
  now: Date,
  onMailFailure: (error: unknown) => void,
): Promise<void> {
  const until = lockEndsAt(now);
  const locked = await ctx.db.transaction(async (tx) => {
    const notLocked = or(isNull(users.lockedAt), lte(users.lockedAt, new Date(now.getTime() - lockSeconds * 1000)));
    const [user] = await tx
      .update(users)
      .set({ lockedAt: now, updatedAt: now })
      .where(and(sql`lower(${users.email}) = ${email}`, eq(users.isApiUser, false), notLocked))
      .returning();
    if (!user) return null;
    const sources = await listSignInFailures(tx, email, now);
    const link = await createAccountLink(tx, user.uid, "unlock", now, until);
    await audit(tx, {
      action: "account_locked",
      at: now,
      subjectUid: user.uid,
      origin,
      details: {
        failures,
        until: until.toISOString(),
        sources: sources.map((source) => ({ address: source.source, kind: source.kind, failures: source.failures })),
      },
    });
    return { user, token: link.token, addresses: new Set(sources.map((source) => source.source)).size };
  });
  if (!locked) return;
  await sendMailInBackground(ctx, lockMail(ctx, locked.user, { failures, addresses: locked.addresses, until, token: locked.token }), onMailFailure);
}

/** The mail to the owner of an account that has just locked. */
export function lockMail(ctx: SignonContext, user: User, lock: { failures: number; addresses: number; until: Date; token: string }) {
  const until = formatTime(lock.until);
  const from = lock.addresses === 1 ? "1 address" : `${lock.addresses} addresses`;
  return {
    to: user.email,
    subject: "Your Tessera Sign-on account is locked",
    text: [
      `Hello ${user.name},`,
      "",
      `${lock.failures} failed sign-in attempts were made on your Tessera Sign-on account in the last hour, from ${from}.`,
      `To protect it, your account is locked until ${until}.`,
      "",
      "If that was you, unlock your account now with this link. It works once, without signing in, until the lock ends:",
      "",
      `${ctx.config.publicUrl}/unlock/${lock.token}`,
      "",
      "If it was not you, someone may be trying to guess your password. Choose a new one: resetting your password also unlocks the account.",
      "",
      `${ctx.config.publicUrl}/password-reset`,
      "",
      `If you do nothing, the account unlocks by itself at ${until}.`,
    ].join("\n"),
  };
}

/**
 * Lifts the lock of `user` and forgets what led to it: the count of failures
 * for their address from every source, and their unused unlock links. The
 * per-source counts go too, for every source (an administrator), for one
 * (the owner's own address, through the unlock link or a password reset), or
 * none. Run it in the transaction of the change that unlocks.
 */
export async function clearAccountLock(db: SignonDatabase, user: Pick<User, "uid" | "email">, now: Date, sources: "every" | { source: string } | "none"): Promise<void> {
  const email = normaliseEmail(user.email);
  await db.update(users).set({ lockedAt: null, updatedAt: now }).where(eq(users.uid, user.uid));
  await db.delete(failureCounters).where(eq(failureCounters.key, `${failuresBeforeAccountLock.name}:${email}`));
  await deleteUnusedAccountLinks(db, user.uid, "unlock");
  if (sources === "every") await deleteSignInFailures(db, email);
  else if (sources !== "none") await deleteSignInFailures(db, email, { source: sources.source });
}

/** Forgets one source's failures of one kind for an address, after a right password or code from it. */
export async function clearSourceFailures(db: SignonDatabase, email: string, origin: RequestOrigin, kind: SignInFailureKind): Promise<void> {
  await deleteSignInFailures(db, normaliseEmail(email), { source: signInSource(origin), kind });
}
