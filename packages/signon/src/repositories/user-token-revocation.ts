import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";

/** What a bulk revocation of a person's sign-in tokens ended. */
export interface RevokedSignInTokens {
  accessTokens: number;
  refreshTokens: number;
  /** The applications that held at least one of the revoked tokens. */
  applicationIds: string[];
}

/**
 * Revokes every grant of a user, with every access and refresh token issued
 * under them, for every application, in one statement inside the caller's
 * transaction. Counts only tokens that were still live (not revoked, not
 * expired, not rotated). Callers keep API users' pre-issued tokens (S17)
 * out of it.
 */
export async function revokeTokensOfUser(db: SignonDatabase, userUid: string, now: Date): Promise<RevokedSignInTokens> {
  const at = now.toISOString();
  const result = await db.execute<{ access_tokens: string | number; refresh_tokens: string | number; application_ids: string[] | null }>(sql`
    with revoked_grants as (
      update signon.grants set revoked_at = ${at}::timestamptz
       where user_uid = ${userUid} and revoked_at is null
      returning id, application_id
    ), user_grants as (
      select id from signon.grants where user_uid = ${userUid}
    ), access as (
      update signon.access_tokens t set revoked_at = ${at}::timestamptz
       where t.grant_id in (select id from user_grants) and t.revoked_at is null
      returning t.application_id, t.expires_at > ${at}::timestamptz as live
    ), refresh as (
      update signon.refresh_tokens t set revoked_at = ${at}::timestamptz
       where t.grant_id in (select id from user_grants) and t.revoked_at is null
      returning t.grant_id, t.rotated_at is null as live
    )
    select (select count(*) from access where live) as access_tokens,
           (select count(*) from refresh where live) as refresh_tokens,
           (select array_agg(distinct application_id::text) from (
              select application_id from access where live
              union select g.application_id from refresh r join signon.grants g on g.id = r.grant_id where r.live
              union select application_id from revoked_grants
            ) as touched) as application_ids`);
  const row = result.rows[0];
  return {
    accessTokens: Number(row?.access_tokens ?? 0),
    refreshTokens: Number(row?.refresh_tokens ?? 0),
    applicationIds: row?.application_ids ?? [],
  };
}
