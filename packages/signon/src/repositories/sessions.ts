import { and, eq, ne } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { organisations, sessions, users } from "../db/schema.js";

export type Session = typeof sessions.$inferSelect;

export async function insertSession(db: SignonDatabase, row: typeof sessions.$inferInsert): Promise<void> {
  await db.insert(sessions).values(row);
}

/** A session and its user, with whether the user's organisation requires 2-step verification, by the digest of the session id. */
export async function findSession(
  db: SignonDatabase,
  idHash: string,
): Promise<{ session: Session; user: typeof users.$inferSelect; organisationRequiresTwoStep: boolean } | null> {
  const [row] = await db
    .select({ session: sessions, user: users, organisationRequiresTwoStep: organisations.twoStepRequired })
    .from(sessions)
    .innerJoin(users, eq(users.uid, sessions.userUid))
    .leftJoin(organisations, eq(organisations.id, users.organisationId))
    .where(eq(sessions.idHash, idHash))
    .limit(1);
  return row ? { ...row, organisationRequiresTwoStep: row.organisationRequiresTwoStep ?? false } : null;
}

export async function touchSession(db: SignonDatabase, idHash: string, now: Date): Promise<void> {
  await db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.idHash, idHash));
}

export async function deleteSession(db: SignonDatabase, idHash: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.idHash, idHash));
}

export async function deleteSessionsOfUser(db: SignonDatabase, userUid: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.userUid, userUid));
}

/** Ends every session of the user but one (the one that changed the password). */
export async function deleteOtherSessionsOfUser(db: SignonDatabase, userUid: string, keepIdHash: string): Promise<void> {
  await db.delete(sessions).where(and(eq(sessions.userUid, userUid), ne(sessions.idHash, keepIdHash)));
}

/** Leaves a message for the next page the session shows, or clears it (`null`). */
export async function setSessionFlash(db: SignonDatabase, idHash: string, flash: Session["flash"]): Promise<void> {
  await db.update(sessions).set({ flash }).where(eq(sessions.idHash, idHash));
}
