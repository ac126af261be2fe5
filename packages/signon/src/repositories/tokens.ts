import { and, eq, gt, isNull } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { accessTokens, applications, grants, refreshTokens, users } from "../db/schema.js";

export type AccessToken = typeof accessTokens.$inferSelect;
export type RefreshToken = typeof refreshTokens.$inferSelect;

export async function insertAccessToken(db: SignonDatabase, row: typeof accessTokens.$inferInsert): Promise<AccessToken> {
  const [inserted] = await db.insert(accessTokens).values(row).returning();
  if (!inserted) throw new Error("insert returned no row");
  return inserted;
}

export async function insertRefreshToken(db: SignonDatabase, row: typeof refreshTokens.$inferInsert): Promise<RefreshToken> {
  const [inserted] = await db.insert(refreshTokens).values(row).returning();
  if (!inserted) throw new Error("insert returned no row");
  return inserted;
}

/**
 * Retires a live refresh token, once: returns it when this call retired it,
 * `null` when no live token has that digest (unknown, rotated or revoked).
 */
export async function rotateRefreshToken(db: SignonDatabase, tokenHash: string, now: Date): Promise<RefreshToken | null> {
  const [row] = await db
    .update(refreshTokens)
    .set({ rotatedAt: now })
    .where(and(eq(refreshTokens.tokenHash, tokenHash), isNull(refreshTokens.rotatedAt), isNull(refreshTokens.revokedAt)))
    .returning();
  return row ?? null;
}

/** A refresh token with the grant it belongs to, live or not. */
export async function findRefreshToken(
  db: SignonDatabase,
  tokenHash: string,
): Promise<{ token: RefreshToken; grant: typeof grants.$inferSelect } | null> {
  const [row] = await db
    .select({ token: refreshTokens, grant: grants })
    .from(refreshTokens)
    .innerJoin(grants, eq(grants.id, refreshTokens.grantId))
    .where(eq(refreshTokens.tokenHash, tokenHash))
    .limit(1);
  return row ?? null;
}

/** An access token as a resource request sees it: with its grant, user and application. */
export interface AccessTokenRecord {
  token: AccessToken;
  grant: typeof grants.$inferSelect;
  user: typeof users.$inferSelect;
  application: typeof applications.$inferSelect;
}

/** Finds an access token that is neither expired nor revoked at `now`. */
export async function findLiveAccessToken(db: SignonDatabase, tokenHash: string, now: Date): Promise<AccessTokenRecord | null> {
  const [row] = await db
    .select({ token: accessTokens, grant: grants, user: users, application: applications })
    .from(accessTokens)
    .innerJoin(grants, eq(grants.id, accessTokens.grantId))
    .innerJoin(users, eq(users.uid, accessTokens.userUid))
    .innerJoin(applications, eq(applications.id, accessTokens.applicationId))
    .where(
      and(
        eq(accessTokens.tokenHash, tokenHash),
        isNull(accessTokens.revokedAt),
        isNull(grants.revokedAt),
        gt(accessTokens.expiresAt, now),
      ),
    )
    .limit(1);
  return row ?? null;
}

/** Finds an access token by digest, live or not. */
export async function findAccessToken(db: SignonDatabase, tokenHash: string): Promise<AccessToken | null> {
  const [row] = await db.select().from(accessTokens).where(eq(accessTokens.tokenHash, tokenHash)).limit(1);
  return row ?? null;
}

export async function revokeAccessToken(db: SignonDatabase, id: string, now: Date): Promise<void> {
  await db.update(accessTokens).set({ revokedAt: now }).where(and(eq(accessTokens.id, id), isNull(accessTokens.revokedAt)));
}
