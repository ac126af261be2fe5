import type { SignonDatabase } from "../db/database.js";
import { countFailure, readFailures } from "../repositories/failure-counters.js";

/** A brute-force limit: at most `maxFailures` in `windowSeconds` per key (S15). */
export interface FailureLimit {
  name: string;
  maxFailures: number;
  windowSeconds: number;
}

/** S15: client password authentication, per (client id, source address) and per source address. */
export const clientAuthenticationLimit: FailureLimit = { name: "client-auth", maxFailures: 10, windowSeconds: 600 };
/**
 * S15: more failures than this for one client id, from any addresses, in the
 * window is a flood. It is logged once, counted and shown, and refuses nobody:
 * the client id is public, so a limit on it would let anyone switch the
 * client off.
 */
export const clientAuthenticationFlood: FailureLimit = { name: "client-auth-flood", maxFailures: 100, windowSeconds: 600 };
/** S15: sign-in attempts per IP. */
export const signInPerIpLimit: FailureLimit = { name: "sign-in-ip", maxFailures: 30, windowSeconds: 600 };
/** Sign-ins sent to organisations' providers from one source address: each one waits in the database until it comes back or expires. */
export const upstreamSignInPerIpLimit: FailureLimit = { name: "upstream-sign-in-ip", maxFailures: 60, windowSeconds: 600 };

/** Seconds until the first of `keys` that is over the limit may try again, or `null` when none is. */
export async function secondsUntilAllowed(
  db: SignonDatabase,
  limit: FailureLimit,
  keys: readonly string[],
  now: Date,
): Promise<number | null> {
  let wait: number | null = null;
  for (const count of await readFailures(db, keys.map((key) => `${limit.name}:${key}`), now)) {
    if (count.failures >= limit.maxFailures) {
      const seconds = (count.windowEndsAt.getTime() - now.getTime()) / 1000;
      wait = Math.max(wait ?? 0, seconds);
    }
  }
  return wait;
}

/**
 * Counts one failure under each key and returns the seconds until the first
 * key over the limit may try again, or `null` when none is over it. Decided
 * on the totals the atomic counts return, so simultaneous failures on several
 * instances cannot all slip under the limit.
 */
export async function recordFailure(db: SignonDatabase, limit: FailureLimit, keys: readonly string[], now: Date): Promise<number | null> {
  let wait: number | null = null;
  for (const key of keys) {
    const count = await countFailure(db, `${limit.name}:${key}`, limit.windowSeconds, now);
    if (count.failures > limit.maxFailures) wait = Math.max(wait ?? 0, (count.windowEndsAt.getTime() - now.getTime()) / 1000);
  }
  return wait;
}

/**
 * Counts one failure under `key` and says whether this one took the count
 * past the limit: `true` for exactly one failure per window, across every
 * instance, so what follows (a log line, an audit event) happens once.
 */
export async function recordFailureCrossingLimit(db: SignonDatabase, limit: FailureLimit, key: string, now: Date): Promise<boolean> {
  const count = await countFailure(db, `${limit.name}:${key}`, limit.windowSeconds, now);
  return count.failures === limit.maxFailures + 1;
}
