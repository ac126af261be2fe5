import { and, eq, getTableColumns, inArray, isNull, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { accessTokens, grants, refreshTokens, userPermissions, users } from "../db/schema.js";
import type { UsedGrant } from "./tokens.js";

export type Grant = typeof grants.$inferSelect;
export type NewGrant = typeof grants.$inferInsert;

export async function insertGrant(db: SignonDatabase, row: NewGrant): Promise<Grant> {
  const [inserted] = await db.insert(grants).values(row).returning();
  if (!inserted) throw new Error("insert returned no row");
  return inserted;
}

/**
 * Marks a code of an application used, once, and returns its grant with the
 * user's standing; `null` when the application has no unused code with that
 * digest (unknown, already used, or another application's).
 */
export async function useCode(db: SignonDatabase, codeHash: string, applicationId: string, now: Date): Promise<UsedGrant | null> {
  const holdsSignin = sql<boolean>`exists (select 1 from ${userPermissions} p
    where p.user_uid = ${grants.userUid} and p.application_id = ${grants.applicationId} and p.permission = 'signin')`;
  const [row] = await db
    .update(grants)
    .set({ codeUsedAt: now })
    .from(users)
    .where(and(eq(grants.codeHash, codeHash), eq(grants.applicationId, applicationId), isNull(grants.codeUsedAt), eq(users.uid, grants.userUid)))
    .returning({ ...getTableColumns(grants), userSuspendedAt: users.suspendedAt, userHoldsSignin: holdsSignin });
  if (!row) return null;
  const { userSuspendedAt, userHoldsSignin, ...grant } = row;
  return { grant, userSuspended: userSuspendedAt !== null, userHoldsSignin };
}

export async function findGrantByCodeHash(db: SignonDatabase, codeHash: string): Promise<Grant | null> {
  const [row] = await db.select().from(grants).where(eq(grants.codeHash, codeHash)).limit(1);
  return row ?? null;
}

/** Revokes a grant and every access and refresh token issued under it. */
export async function revokeGrant(db: SignonDatabase, grantId: string, now: Date): Promise<void> {
  await db.update(grants).set({ revokedAt: now }).where(and(eq(grants.id, grantId), isNull(grants.revokedAt)));
  await db
    .update(accessTokens)
    .set({ revokedAt: now })
    .where(and(eq(accessTokens.grantId, grantId), isNull(accessTokens.revokedAt)));
  await db
    .update(refreshTokens)
    .set({ revokedAt: now })
    .where(and(eq(refreshTokens.grantId, grantId), isNull(refreshTokens.revokedAt)));
}

/** Revokes every grant of a user and every token issued under them. */
export async function revokeGrantsOfUser(db: SignonDatabase, userUid: string, now: Date): Promise<void> {
  await db.update(grants).set({ revokedAt: now }).where(and(eq(grants.userUid, userUid), isNull(grants.revokedAt)));
  const userGrants = db.select({ id: grants.id }).from(grants).where(eq(grants.userUid, userUid));
  await db
    .update(accessTokens)
    .set({ revokedAt: now })
    .where(and(isNull(accessTokens.revokedAt), inArray(accessTokens.grantId, userGrants)));
  await db
    .update(refreshTokens)
    .set({ revokedAt: now })
    .where(and(isNull(refreshTokens.revokedAt), inArray(refreshTokens.grantId, userGrants)));
}
