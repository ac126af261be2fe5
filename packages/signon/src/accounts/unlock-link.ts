import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { User } from "../repositories/users.js";
import { consumeAccountLink, inspectAccountLink } from "./account-links.js";
import { clearAccountLock, signInSource } from "./sign-in-limits.js";

/** What following the unlock link of a lock mail gave: the unlocked user, or why the link cannot be used. */
export type UnlockThroughLinkResult = { ok: true; user: User } | { ok: false; link: "unknown" | "expired" | "used" };

/**
 * Unlocks an account through the link mailed when it locked (S15), without
 * signing in: the link works once, until the lock would have ended; only the
 * SHA-256 digest of its token is stored and looked up. Uses up the link,
 * lifts the lock and forgets the failures counted against the address from
 * this browser's source address (other sources stay refused), and writes
 * `account_unlocked`, in one transaction. A link used meanwhile by another
 * request answers `used`.
 */
export async function unlockThroughLink(ctx: SignonContext, token: string, origin: RequestOrigin): Promise<UnlockThroughLinkResult> {
  const found = await inspectAccountLink(ctx, token, "unlock");
  if (found.state !== "usable") return { ok: false, link: found.state };
  const now = ctx.now();
  const done = await ctx.db.transaction(async (tx) => {
    if (!(await consumeAccountLink(tx, token, "unlock", now))) return false;
    await clearAccountLock(tx, found.user, now, { source: signInSource(origin) });
    await audit(tx, { action: "account_unlocked", at: now, actorUid: found.user.uid, subjectUid: found.user.uid, origin, details: { through: "unlock_link" } });
    return true;
  });
  return done ? { ok: true, user: found.user } : { ok: false, link: "used" };
}
