import { sql, type SQL } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";

/** New tokens to store when an exchange succeeds, and the audit event's context. */
export interface NewTokens {
  accessTokenHash: string;
  refreshTokenHash: string;
  accessTokenExpiresAt: Date;
  now: Date;
  ip: string | null;
  userAgent: string | null;
}

/** Whom the tokens were issued for. */
export interface Issued {
  grantId: string;
  userUid: string;
}

/**
 * The rest of a single exchange statement: stores the token pair and the
 * audit event for the row that `source` (a CTE returning `grant_id`,
 * `user_uid`, `application_id`) produced, and returns that row.
 */
function storeTokensFrom(source: SQL, tokens: NewTokens, action: string): SQL {
  const now = tokens.now.toISOString();
  return sql`
    , access as (
      insert into signon.access_tokens (id, grant_id, token_hash, user_uid, application_id, expires_at, created_at)
      select gen_random_uuid(), grant_id, ${tokens.accessTokenHash}, user_uid, application_id,
             ${tokens.accessTokenExpiresAt.toISOString()}::timestamptz, ${now}::timestamptz from ${source}
    ), refresh as (
      insert into signon.refresh_tokens (id, grant_id, token_hash, created_at)
      select gen_random_uuid(), grant_id, ${tokens.refreshTokenHash}, ${now}::timestamptz from ${source}
    ), event as (
      insert into signon.audit_events (occurred_at, action, subject_uid, application_id, ip, user_agent, details)
      select ${now}::timestamptz, ${action}, user_uid, application_id, ${tokens.ip}::inet, ${tokens.userAgent}, '{}'::jsonb from ${source}
    )
    select grant_id, user_uid from ${source}`;
}

const userMaySignIn = (grant: SQL) => sql`
  exists (select 1 from signon.users u where u.uid = ${grant}.user_uid and u.suspended_at is null)
  and exists (select 1 from signon.user_permissions p
              where p.user_uid = ${grant}.user_uid and p.application_id = ${grant}.application_id and p.permission = 'signin')`;

/**
 * The whole successful `authorization_code` exchange in one statement (so one
 * round trip, atomic without an explicit transaction): uses the code only if
 * every check passes (unused, unexpired, this application, same redirect
 * URI, matching PKCE challenge, user still allowed in) and stores the new
 * tokens. `null` when any check fails; the caller then finds out why.
 */
export async function exchangeCodeInOneStatement(
  db: SignonDatabase,
  code: { codeHash: string; applicationId: string; redirectUri: string | null; verifierChallenge: string | null; verifierSent: boolean },
  tokens: NewTokens,
): Promise<Issued | null> {
  const result = await db.execute<{ grant_id: string; user_uid: string }>(sql`
    with used as (
      update signon.grants g set code_used_at = ${tokens.now.toISOString()}::timestamptz
       where g.code_hash = ${code.codeHash} and g.application_id = ${code.applicationId}
         and g.code_used_at is null and g.revoked_at is null
         and g.code_expires_at > ${tokens.now.toISOString()}::timestamptz
         and (g.redirect_uri is null or g.redirect_uri = ${code.redirectUri})
         and ((g.code_challenge is null and not ${code.verifierSent}) or g.code_challenge = ${code.verifierChallenge})
         and ${userMaySignIn(sql`g`)}
      returning g.id as grant_id, g.user_uid, g.application_id
    )
    ${storeTokensFrom(sql`used`, tokens, "tokens_issued")}`);
  const row = result.rows[0];
  return row ? { grantId: row.grant_id, userUid: row.user_uid } : null;
}

/**
 * The whole successful refresh in one statement: retires a live refresh token
 * of the application whose user may still sign in, and stores the new pair.
 * `null` when the token is not live (or the user may no longer sign in); the
 * caller then finds out why, and detects reuse.
 */
export async function rotateRefreshTokenInOneStatement(
  db: SignonDatabase,
  refresh: { tokenHash: string; applicationId: string },
  tokens: NewTokens,
): Promise<Issued | null> {
  const result = await db.execute<{ grant_id: string; user_uid: string }>(sql`
    with rotated as (
      update signon.refresh_tokens r set rotated_at = ${tokens.now.toISOString()}::timestamptz
        from signon.grants g
       where r.token_hash = ${refresh.tokenHash} and r.rotated_at is null and r.revoked_at is null
         and g.id = r.grant_id and g.application_id = ${refresh.applicationId} and g.revoked_at is null
         and ${userMaySignIn(sql`g`)}
      returning g.id as grant_id, g.user_uid, g.application_id
    )
    ${storeTokensFrom(sql`rotated`, tokens, "tokens_refreshed")}`);
  const row = result.rows[0];
  return row ? { grantId: row.grant_id, userUid: row.user_uid } : null;
}
