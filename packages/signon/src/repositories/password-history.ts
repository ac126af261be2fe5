import { and, desc, eq } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { passwordHistory, users } from "../db/schema.js";

/** The hashes of the user's most recent passwords, newest first. */
export async function recentPasswordHashes(db: SignonDatabase, userUid: string, count: number): Promise<string[]> {
  const rows = await db
    .select({ passwordHash: passwordHistory.passwordHash })
    .from(passwordHistory)
    .where(eq(passwordHistory.userUid, userUid))
    .orderBy(desc(passwordHistory.createdAt), desc(passwordHistory.id))
    .limit(count);
  return rows.map((row) => row.passwordHash);
}

/**
 * Stores a new password hash on the user and appends it to their password
 * history. A password set before history was kept (for example at account
 * creation) is added to the history first, so it counts as a previous one.
 */
export async function storePasswordHash(db: SignonDatabase, userUid: string, passwordHash: string, now: Date): Promise<void> {
  const [current] = await db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.uid, userUid)).limit(1);
  const [latest] = await recentPasswordHashes(db, userUid, 1);
  if (current?.passwordHash && current.passwordHash !== latest) {
    await db.insert(passwordHistory).values({ userUid, passwordHash: current.passwordHash, createdAt: now });
  }
  await db.update(users).set({ passwordHash, passwordChangedAt: now, newPasswordRequired: false, updatedAt: now }).where(eq(users.uid, userUid));
  await db.insert(passwordHistory).values({ userUid, passwordHash, createdAt: now });
}

/**
 * Replaces a hash imported from Signon with Sign-on's own hash of the same
 * password, on the user and in their history, unless the password changed in
 * the meantime. The password is the same, so its change time stays.
 */
export async function replaceImportedPasswordHash(db: SignonDatabase, userUid: string, importedHash: string, passwordHash: string, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    const replaced = await tx
      .update(users)
      .set({ passwordHash, updatedAt: now })
      .where(and(eq(users.uid, userUid), eq(users.passwordHash, importedHash)))
      .returning({ uid: users.uid });
    if (replaced.length === 0) return;
    await tx.update(passwordHistory).set({ passwordHash }).where(and(eq(passwordHistory.userUid, userUid), eq(passwordHistory.passwordHash, importedHash)));
  });
}
