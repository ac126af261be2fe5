import { eq, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { users } from "../db/schema.js";

export type User = typeof users.$inferSelect;
export type NewUser = typeof users.$inferInsert;

/**
 * A name as stored: composed (NFC), so that a letter typed as a base and a
 * combining mark is the one character a search for it holds.
 */
function storedName(name: string): string {
  return name.normalize("NFC");
}

export async function insertUser(db: SignonDatabase, row: NewUser): Promise<User> {
  const [inserted] = await db
    .insert(users)
    .values({ ...row, name: storedName(row.name) })
    .returning();
  if (!inserted) throw new Error("insert returned no row");
  return inserted;
}

export async function findUserByUid(db: SignonDatabase, uid: string): Promise<User | null> {
  const [row] = await db.select().from(users).where(eq(users.uid, uid)).limit(1);
  return row ?? null;
}

/** Finds a user by e-mail address, ignoring case. */
export async function findUserByEmail(db: SignonDatabase, email: string): Promise<User | null> {
  const [row] = await db
    .select()
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email})`)
    .limit(1);
  return row ?? null;
}

export async function updateUser(
  db: SignonDatabase,
  uid: string,
  changes: Partial<Pick<User, "suspendedAt" | "suspensionReason" | "passwordHash" | "name" | "role" | "email" | "organisationId" | "unsuspendedAt" | "newPasswordRequired" | "tokenAutoRenewal">> & { updatedAt: Date },
): Promise<User | null> {
  const stored = changes.name === undefined ? changes : { ...changes, name: storedName(changes.name) };
  const [row] = await db.update(users).set(stored).where(eq(users.uid, uid)).returning();
  return row ?? null;
}

/** How many people (not API users) have an account. */
export async function countPeople(db: SignonDatabase): Promise<number> {
  const [row] = await db.select({ count: sql<number>`count(*)::int` }).from(users).where(eq(users.isApiUser, false));
  return row?.count ?? 0;
}

/** Sets the time of the user's last completed sign-in. */
export async function recordSignIn(db: SignonDatabase, uid: string, now: Date): Promise<void> {
  await db.update(users).set({ lastSignedInAt: now }).where(eq(users.uid, uid));
}

/** Records when the user's latest invitation was sent. */
export async function recordInvitationSent(db: SignonDatabase, uid: string, now: Date): Promise<void> {
  await db.update(users).set({ invitationSentAt: now }).where(eq(users.uid, uid));
}
