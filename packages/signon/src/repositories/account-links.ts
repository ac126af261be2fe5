import { and, desc, eq, gt, isNull } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { accountLinks } from "../db/schema.js";

export type AccountLink = typeof accountLinks.$inferSelect;
/** Links that lead to choosing a password. */
export type PasswordLinkPurpose = "invitation" | "password_reset";
/** Every kind of e-mailed link: the password ones and the unlock link of a locked account (S15). */
export type AccountLinkPurpose = PasswordLinkPurpose | "unlock";

export async function insertAccountLink(db: SignonDatabase, row: typeof accountLinks.$inferInsert): Promise<void> {
  await db.insert(accountLinks).values(row);
}

/** A link by the digest of its token, whatever its state. */
export async function findAccountLink(db: SignonDatabase, tokenHash: string): Promise<AccountLink | null> {
  const [row] = await db.select().from(accountLinks).where(eq(accountLinks.tokenHash, tokenHash)).limit(1);
  return row ?? null;
}

/** The user's newest unused link of one purpose, expired or not (a newer link deletes the older unused ones). */
export async function findLatestUnusedAccountLink(db: SignonDatabase, userUid: string, purpose: AccountLinkPurpose): Promise<AccountLink | null> {
  const [row] = await db
    .select()
    .from(accountLinks)
    .where(and(eq(accountLinks.userUid, userUid), eq(accountLinks.purpose, purpose), isNull(accountLinks.usedAt)))
    .orderBy(desc(accountLinks.createdAt))
    .limit(1);
  return row ?? null;
}

/**
 * Marks a link used if it is still unused and unexpired, in one statement, so
 * two requests cannot both use it. Returns the link, or `null` when it was not usable.
 */
export async function markAccountLinkUsed(
  db: SignonDatabase,
  tokenHash: string,
  purpose: AccountLinkPurpose,
  now: Date,
): Promise<AccountLink | null> {
  const [row] = await db
    .update(accountLinks)
    .set({ usedAt: now })
    .where(and(eq(accountLinks.tokenHash, tokenHash), eq(accountLinks.purpose, purpose), isNull(accountLinks.usedAt), gt(accountLinks.expiresAt, now)))
    .returning();
  return row ?? null;
}

/** Deletes the user's unused links of one purpose (a newer link replaces them). */
export async function deleteUnusedAccountLinks(db: SignonDatabase, userUid: string, purpose: AccountLinkPurpose): Promise<void> {
  await db
    .delete(accountLinks)
    .where(and(eq(accountLinks.userUid, userUid), eq(accountLinks.purpose, purpose), isNull(accountLinks.usedAt)));
}
