import { and, asc, eq, gt, lte, or, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { passkeyChallenges, passkeys, users } from "../db/schema.js";

export type Passkey = typeof passkeys.$inferSelect;
export type PasskeyChallenge = typeof passkeyChallenges.$inferSelect;
export type PasskeyChallengePurpose = "registration" | "second_factor" | "passwordless";

/** The person's passkeys, oldest first. */
export async function listPasskeysOfUser(db: SignonDatabase, userUid: string): Promise<Passkey[]> {
  return db.select().from(passkeys).where(eq(passkeys.userUid, userUid)).orderBy(asc(passkeys.createdAt), asc(passkeys.id));
}

/** A passkey by its credential id (base64url), whoever it belongs to. */
export async function findPasskeyByCredentialId(db: SignonDatabase, credentialId: string): Promise<Passkey | null> {
  const [row] = await db.select().from(passkeys).where(eq(passkeys.credentialId, credentialId)).limit(1);
  return row ?? null;
}

/** One of the person's passkeys by its id, or `null` (someone else's counts as none). */
export async function findPasskeyOfUser(db: SignonDatabase, userUid: string, id: string): Promise<Passkey | null> {
  const [row] = await db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.userUid, userUid)))
    .limit(1);
  return row ?? null;
}

/**
 * Stores a new passkey and counts it on its user. Returns `false` when the
 * credential id is registered already (to anyone), in which case nothing changes.
 */
export async function insertPasskey(db: SignonDatabase, row: typeof passkeys.$inferInsert, now: Date): Promise<boolean> {
  const inserted = await db.insert(passkeys).values(row).onConflictDoNothing({ target: passkeys.credentialId }).returning({ id: passkeys.id });
  if (inserted.length === 0) return false;
  await db
    .update(users)
    .set({ passkeyCount: sql`${users.passkeyCount} + 1`, updatedAt: now })
    .where(eq(users.uid, row.userUid));
  return true;
}

/** Removes one of the person's passkeys and uncounts it. Returns the passkey removed, or `null` when there was none. */
export async function deletePasskeyOfUser(db: SignonDatabase, userUid: string, id: string, now: Date): Promise<Passkey | null> {
  const [row] = await db
    .delete(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.userUid, userUid)))
    .returning();
  if (!row) return null;
  await db
    .update(users)
    .set({ passkeyCount: sql`greatest(${users.passkeyCount} - 1, 0)`, updatedAt: now })
    .where(eq(users.uid, userUid));
  return row;
}

/** Removes every passkey of the person (a 2-step reset). Returns how many there were. */
export async function deletePasskeysOfUser(db: SignonDatabase, userUid: string, now: Date): Promise<number> {
  const rows = await db.delete(passkeys).where(eq(passkeys.userUid, userUid)).returning({ id: passkeys.id });
  await db.update(users).set({ passkeyCount: 0, updatedAt: now }).where(eq(users.uid, userUid));
  await db.delete(passkeyChallenges).where(eq(passkeyChallenges.userUid, userUid));
  return rows.length;
}

/**
 * Records a use of the passkey with the counter its authenticator reported,
 * in one statement that only succeeds when the counter went up (or both stay
 * 0, for authenticators without a counter): of two responses with the same
 * counter, only one is accepted.
 *
 * @see https://www.w3.org/TR/webauthn-3/#sctn-sign-counter
 */
export async function recordPasskeyUse(db: SignonDatabase, id: string, newCount: number, now: Date): Promise<boolean> {
  const rows = await db
    .update(passkeys)
    .set({ signCount: newCount, lastUsedAt: now })
    .where(and(eq(passkeys.id, id), or(sql`${passkeys.signCount} < ${newCount}`, and(eq(passkeys.signCount, 0), sql`${newCount} = 0`))))
    .returning({ id: passkeys.id });
  return rows.length > 0;
}

/** Stores a challenge handed out; challenges that have expired are removed on the way. */
export async function insertPasskeyChallenge(db: SignonDatabase, row: PasskeyChallenge, now: Date): Promise<void> {
  await db.delete(passkeyChallenges).where(lte(passkeyChallenges.expiresAt, now));
  await db.insert(passkeyChallenges).values(row);
}

/**
 * Takes a challenge: deletes and returns it when it exists for this purpose,
 * was handed to the browser that `bindingHash` stands for (the digest of its
 * session id, or of its passwordless sign-in cookie) and has not expired, so
 * that it answers one response only, from that browser. A challenge handed
 * to another browser is left alone: nobody else can use it up.
 */
export async function takePasskeyChallenge(
  db: SignonDatabase,
  challenge: string,
  purpose: PasskeyChallengePurpose,
  bindingHash: string,
  now: Date,
): Promise<PasskeyChallenge | null> {
  const [row] = await db
    .delete(passkeyChallenges)
    .where(
      and(
        eq(passkeyChallenges.challenge, challenge),
        eq(passkeyChallenges.purpose, purpose),
        eq(passkeyChallenges.sessionHash, bindingHash),
        gt(passkeyChallenges.expiresAt, now),
      ),
    )
    .returning();
  return row ?? null;
}

/** Removes every challenge still bound to `bindingHash` (the browser signed in: its other challenges are spent). */
export async function deletePasskeyChallengesOfBinding(db: SignonDatabase, bindingHash: string): Promise<void> {
  await db.delete(passkeyChallenges).where(eq(passkeyChallenges.sessionHash, bindingHash));
}
