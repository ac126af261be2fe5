import type { SignonContext } from "../context.js";
import type { SignonDatabase } from "../db/database.js";
import {
  deleteUnusedAccountLinks,
  findAccountLink,
  insertAccountLink,
  markAccountLinkUsed,
  type AccountLink,
  type AccountLinkPurpose,
  type PasswordLinkPurpose,
} from "../repositories/account-links.js";
import { findUserByUid, type User } from "../repositories/users.js";
import { randomHex, sha256Hex } from "../security/random.js";

export type { AccountLinkPurpose, PasswordLinkPurpose };

/** How long each kind of password link works (an unlock link works until its lock ends). */
export const accountLinkLifetimeSeconds: Record<PasswordLinkPurpose, number> = {
  invitation: 14 * 24 * 3600,
  password_reset: 6 * 3600,
};

const tokenPattern = /^[0-9a-f]{64}$/;

/**
 * Creates a single-use link token for a user, replacing their unused links of
 * the same purpose. Only the token's SHA-256 digest is stored; the token goes
 * into the e-mail. Run it inside the transaction of the change that sends it.
 * A password link works for its purpose's lifetime unless `fixedExpiresAt`
 * keeps an earlier deadline (an invitation sent again by a reset request
 * keeps its end); an unlock link until `fixedExpiresAt`, the end of the lock.
 */
export async function createAccountLink(
  db: SignonDatabase,
  userUid: string,
  purpose: AccountLinkPurpose,
  now: Date,
  fixedExpiresAt?: Date,
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomHex();
  const expiresAt = fixedExpiresAt ?? (purpose === "unlock" ? undefined : new Date(now.getTime() + accountLinkLifetimeSeconds[purpose] * 1000));
  if (!expiresAt) throw new Error("an unlock link needs the end of its lock");
  await deleteUnusedAccountLinks(db, userUid, purpose);
  await insertAccountLink(db, { tokenHash: sha256Hex(token), userUid, purpose, expiresAt, createdAt: now });
  return { token, expiresAt };
}

/** What a link token leads to: a usable link and its user, or why not. */
export type AccountLinkState =
  | { state: "usable"; link: AccountLink; user: User }
  | { state: "unknown" | "expired" | "used" };

/**
 * Looks a link token up without using it. A link is unusable once used, after
 * it expires, when a newer link replaced it (unknown), or when its user is
 * suspended or an API user (expired).
 */
export async function inspectAccountLink(ctx: SignonContext, token: string, purpose: AccountLinkPurpose): Promise<AccountLinkState> {
  if (!tokenPattern.test(token)) return { state: "unknown" };
  const link = await findAccountLink(ctx.db, sha256Hex(token));
  if (!link || link.purpose !== purpose) return { state: "unknown" };
  if (link.usedAt !== null) return { state: "used" };
  if (link.expiresAt.getTime() <= ctx.now().getTime()) return { state: "expired" };
  const user = await findUserByUid(ctx.db, link.userUid);
  if (!user) return { state: "unknown" };
  if (user.suspendedAt !== null || user.isApiUser) return { state: "expired" };
  return { state: "usable", link, user };
}

/**
 * Uses a link: marks it used if it still is usable, atomically. Returns
 * `false` when another request used it first or it expired meanwhile.
 */
export async function consumeAccountLink(db: SignonDatabase, token: string, purpose: AccountLinkPurpose, now: Date): Promise<boolean> {
  return (await markAccountLinkUsed(db, sha256Hex(token), purpose, now)) !== null;
}
