import { and, eq, isNotNull, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { renewedTokens } from "../db/schema.js";

/** An API user's operator-issued grant whose token expires soon and may be renewed. */
export interface GrantToRenew {
  grantId: string;
  userUid: string;
  applicationId: string;
  expiresAt: Date;
  /** How long the token was issued for, in milliseconds. */
  lifetimeMs: number;
}

/**
 * The grants that may be renewed: issued to an API user who has automatic
 * renewal on and is not suspended, on an application that is not retired,
 * neither revoked nor expired, expiring before `horizon`, and not renewed
 * already (the caller applies each one's own renewal window).
 */
export async function findGrantsToRenew(db: SignonDatabase, now: Date, horizon: Date): Promise<GrantToRenew[]> {
  const result = await db.execute<{ id: string; user_uid: string; application_id: string; expires_at: Date | string; created_at: Date | string }>(sql`
    select g.id, g.user_uid, g.application_id, t.expires_at, t.created_at
      from signon.grants g
      join signon.users u on u.uid = g.user_uid
      join signon.applications a on a.id = g.application_id
      join lateral (select max(x.expires_at) as expires_at, min(x.created_at) as created_at, bool_or(x.revoked_at is not null) as revoked
                      from signon.access_tokens x where x.grant_id = g.id) t on true
     where g.kind = 'issued' and g.revoked_at is null
       and u.is_api_user and u.token_auto_renewal and u.suspended_at is null and not a.retired
       and not t.revoked and t.expires_at > ${now.toISOString()}::timestamptz and t.expires_at <= ${horizon.toISOString()}::timestamptz
       and not exists (select 1 from signon.renewed_tokens r where r.replaces_grant_id = g.id)
     order by t.expires_at, g.id`);
  return result.rows.map((row) => ({
    grantId: row.id,
    userUid: row.user_uid,
    applicationId: row.application_id,
    expiresAt: new Date(row.expires_at),
    lifetimeMs: new Date(row.expires_at).getTime() - new Date(row.created_at).getTime(),
  }));
}

export async function insertRenewedToken(db: SignonDatabase, row: typeof renewedTokens.$inferInsert): Promise<void> {
  await db.insert(renewedTokens).values(row);
}

/** A renewed token an administrator has not acknowledged yet, still sealed. */
export interface PendingRenewedToken {
  grantId: string;
  replacesGrantId: string;
  applicationId: string;
  application: string;
  tokenSealed: string;
  createdAt: Date;
  expiresAt: Date | null;
}

/** An API user's renewed tokens waiting to be seen and acknowledged, oldest first. */
export async function listPendingRenewedTokens(db: SignonDatabase, userUid: string): Promise<PendingRenewedToken[]> {
  const result = await db.execute<{
    grant_id: string; replaces_grant_id: string; application_id: string; name: string; token_sealed: string; created_at: Date | string; expires_at: Date | string | null;
  }>(sql`
    select r.grant_id, r.replaces_grant_id, r.application_id, a.name, r.token_sealed, r.created_at,
           (select max(t.expires_at) from signon.access_tokens t where t.grant_id = r.grant_id) as expires_at
      from signon.renewed_tokens r
      join signon.applications a on a.id = r.application_id
     where r.user_uid = ${userUid}::uuid and r.token_sealed is not null
     order by r.created_at, r.grant_id`);
  return result.rows.map((row) => ({
    grantId: row.grant_id,
    replacesGrantId: row.replaces_grant_id,
    applicationId: row.application_id,
    application: row.name,
    tokenSealed: row.token_sealed,
    createdAt: new Date(row.created_at),
    expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
  }));
}

/** Forgets the sealed token of a renewal once acknowledged; `null` when there was none waiting (unknown, or acknowledged already). */
export async function acknowledgeRenewedTokenRow(
  db: SignonDatabase,
  userUid: string,
  grantId: string,
  at: Date,
  actorUid: string | null,
): Promise<{ applicationId: string } | null> {
  const [row] = await db
    .update(renewedTokens)
    .set({ tokenSealed: null, acknowledgedAt: at, acknowledgedBy: actorUid })
    .where(and(eq(renewedTokens.grantId, grantId), eq(renewedTokens.userUid, userUid), isNotNull(renewedTokens.tokenSealed)))
    .returning({ applicationId: renewedTokens.applicationId });
  return row ?? null;
}

/**
 * For each application, the soonest expiry among the live tokens issued to
 * API users (not Sign-on's own push user, whose day-long tokens renew themselves).
 */
export async function soonestApiTokenExpiries(db: SignonDatabase, now: Date, pushUserEmail: string): Promise<{ application: string; expiresAt: Date }[]> {
  const result = await db.execute<{ name: string; expires_at: Date | string }>(sql`
    select a.name, min(t.expires_at) as expires_at
      from signon.access_tokens t
      join signon.grants g on g.id = t.grant_id
      join signon.users u on u.uid = t.user_uid
      join signon.applications a on a.id = t.application_id
     where g.kind = 'issued' and g.revoked_at is null and t.revoked_at is null
       and t.expires_at > ${now.toISOString()}::timestamptz
       and u.is_api_user and lower(u.email) <> lower(${pushUserEmail}) and not a.retired
     group by a.name
     order by a.name`);
  return result.rows.map((row) => ({ application: row.name, expiresAt: new Date(row.expires_at) }));
}
