import { and, eq, gt, isNull } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { emailChanges } from "../db/schema.js";

export type EmailChange = typeof emailChanges.$inferSelect;

/** Stores a pending change, replacing the user's earlier pending one (at most one each). */
export async function replacePendingEmailChange(db: SignonDatabase, row: typeof emailChanges.$inferInsert): Promise<void> {
  await deletePendingEmailChange(db, row.userUid);
  await db.insert(emailChanges).values(row);
}

/** Deletes the user's pending change; returns it, or `null` when there was none. */
export async function deletePendingEmailChange(db: SignonDatabase, userUid: string): Promise<EmailChange | null> {
  const [row] = await db
    .delete(emailChanges)
    .where(and(eq(emailChanges.userUid, userUid), isNull(emailChanges.confirmedAt)))
    .returning();
  return row ?? null;
}

/** The user's pending change that still works at `now`, or `null`. */
export async function findPendingEmailChange(db: SignonDatabase, userUid: string, now: Date): Promise<EmailChange | null> {
  const [row] = await db
    .select()
    .from(emailChanges)
    .where(and(eq(emailChanges.userUid, userUid), isNull(emailChanges.confirmedAt), gt(emailChanges.expiresAt, now)))
    .limit(1);
  return row ?? null;
}

/** A change by the digest of its token, whatever its state. */
export async function findEmailChange(db: SignonDatabase, tokenHash: string): Promise<EmailChange | null> {
  const [row] = await db.select().from(emailChanges).where(eq(emailChanges.tokenHash, tokenHash)).limit(1);
  return row ?? null;
}

/**
 * Marks a change confirmed if it is still pending and unexpired, in one
 * statement, so two requests cannot both apply it. `null` when it was not.
 */
export async function markEmailChangeConfirmed(db: SignonDatabase, tokenHash: string, now: Date): Promise<EmailChange | null> {
  const [row] = await db
    .update(emailChanges)
    .set({ confirmedAt: now })
    .where(and(eq(emailChanges.tokenHash, tokenHash), isNull(emailChanges.confirmedAt), gt(emailChanges.expiresAt, now)))
    .returning();
  return row ?? null;
}
