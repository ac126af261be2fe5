import { and, eq, getTableColumns, isNull, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { accessTokens, grants, refreshTokens, userPermissions, users } from "../db/schema.js";
import type { AuditEvent } from "./audit-events.js";
import type { Grant } from "./grants.js";

export type AccessToken = typeof accessTokens.$inferSelect;
export type RefreshToken = typeof refreshTokens.$inferSelect;

export async function insertAccessToken(db: SignonDatabase, row: typeof accessTokens.$inferInsert): Promise<AccessToken> {
  const [inserted] = await db.insert(accessTokens).values(row).returning();
  if (!inserted) throw new Error("insert returned no row");
  return inserted;
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

/** Finds an access token by digest, live or not. */
export async function findAccessToken(db: SignonDatabase, tokenHash: string): Promise<AccessToken | null> {
  const [row] = await db.select().from(accessTokens).where(eq(accessTokens.tokenHash, tokenHash)).limit(1);
  return row ?? null;
}

export async function revokeAccessToken(db: SignonDatabase, tokenHash: string, now: Date): Promise<void> {
  await db
    .update(accessTokens)
    .set({ revokedAt: now })
    .where(and(eq(accessTokens.tokenHash, tokenHash), isNull(accessTokens.revokedAt)));
}

/** A new access and refresh token pair under a grant, stored as digests. */
export interface TokenPair {
  grant: Grant;
  accessTokenHash: string;
  refreshTokenHash: string;
  accessTokenExpiresAt: Date;
  createdAt: Date;
}

/**
 * Stores an access token, a refresh token and the audit event of their
 * issue in one statement, inside the caller's transaction.
 */
export async function insertTokenPair(db: SignonDatabase, pair: TokenPair, event: AuditEvent): Promise<void> {
  const { grant, createdAt } = pair;
  await db.execute(sql`
    with access as (
      insert into ${accessTokens} (grant_id, token_hash, user_uid, application_id, expires_at, created_at)
      values (${grant.id}, ${pair.accessTokenHash}, ${grant.userUid}, ${grant.applicationId},
              ${pair.accessTokenExpiresAt.toISOString()}::timestamptz, ${createdAt.toISOString()}::timestamptz)
    ), refresh as (
      insert into ${refreshTokens} (grant_id, token_hash, created_at)
      values (${grant.id}, ${pair.refreshTokenHash}, ${createdAt.toISOString()}::timestamptz)
    )
    insert into signon.audit_events (occurred_at, action, actor_uid, subject_uid, application_id, ip, user_agent, details)
    values (${event.occurredAt.toISOString()}::timestamptz, ${event.action}, ${event.actorUid ?? null}, ${event.subjectUid ?? null},
            ${event.applicationId ?? null}, ${event.ip ?? null}::inet, ${event.userAgent ?? null}, ${JSON.stringify(event.details ?? {})}::jsonb)`);
}

/** A grant whose code or refresh token was just used, with what decides whether tokens may follow. */
export interface UsedGrant {
  grant: Grant;
  userSuspended: boolean;
  userHoldsSignin: boolean;
}

const holdsSignin = sql<boolean>`exists (select 1 from ${userPermissions} p
  where p.user_uid = ${grants.userUid} and p.application_id = ${grants.applicationId} and p.permission = 'signin')`;

/**
 * Retires a live refresh token of an application, once, and returns its
 * grant with the user's standing; `null` when the application has no live
 * refresh token with that digest (unknown, rotated, revoked, or another's).
 */
export async function rotateRefreshTokenOfApplication(
  db: SignonDatabase,
  tokenHash: string,
  applicationId: string,
  now: Date,
): Promise<UsedGrant | null> {
  const [row] = await db
    .update(refreshTokens)
    .set({ rotatedAt: now })
    .from(grants)
    .innerJoin(users, eq(users.uid, grants.userUid))
    .where(
      and(
        eq(refreshTokens.tokenHash, tokenHash),
        isNull(refreshTokens.rotatedAt),
        isNull(refreshTokens.revokedAt),
        eq(grants.id, refreshTokens.grantId),
        eq(grants.applicationId, applicationId),
        isNull(grants.revokedAt),
      ),
    )
    .returning({ ...getTableColumns(grants), userSuspendedAt: users.suspendedAt, userHoldsSignin: holdsSignin });
  if (!row) return null;
  const { userSuspendedAt, userHoldsSignin, ...grant } = row;
  return { grant, userSuspended: userSuspendedAt !== null, userHoldsSignin };
}
