import type { StatementRunner } from "../db/statements.js";

/** New tokens to store when an exchange succeeds, and the audit event's context. */
export interface NewTokens {
  accessTokenHash: string;
  refreshTokenHash: string;
  accessTokenExpiresAt: Date;
  now: Date;
  ip: string | null;
  userAgent: string | null;
}

/** Whom the tokens were issued for, and the grant's OpenID Connect part (`scope` null: a plain OAuth 2 grant). */
export interface Issued {
  grantId: string;
  userUid: string;
  openid: GrantOpenId | null;
}

/** What an OpenID Connect grant keeps for its ID tokens. */
export interface GrantOpenId {
  scope: string;
  nonce: string | null;
  authTime: Date | null;
  amr: string[] | null;
}

interface IssuedRow {
  grant_id: string;
  user_uid: string;
  scope: string | null;
  nonce: string | null;
  auth_time: Date | null;
  amr: string[] | null;
}

function issuedFrom(row: IssuedRow | undefined): Issued | null {
  if (!row) return null;
  const openid = row.scope === null ? null : { scope: row.scope, nonce: row.nonce, authTime: row.auth_time, amr: row.amr };
  return { grantId: row.grant_id, userUid: row.user_uid, openid };
}

// Parameters $1–$6 are the new tokens (see tokenValues); the statements' own start at $7.
const storeTokensFrom = (source: string, action: "tokens_issued" | "tokens_refreshed") => `
    , access as (
      insert into signon.access_tokens (grant_id, token_hash, user_uid, application_id, expires_at, created_at)
      select grant_id, $1, user_uid, application_id, $3::timestamptz, $4::timestamptz from ${source}
    ), refresh as (
      insert into signon.refresh_tokens (grant_id, token_hash, created_at)
      select grant_id, $2, $4::timestamptz from ${source}
    ), event as (
      insert into signon.audit_events (occurred_at, action, subject_uid, application_id, ip, user_agent, details)
      select $4::timestamptz, '${action}', user_uid, application_id, $5::inet, $6, '{}'::jsonb from ${source}
    )
    select grant_id, user_uid, scope, nonce, auth_time, amr from ${source}`;

const userMaySignIn = `
  exists (select 1 from signon.users u where u.uid = g.user_uid and u.suspended_at is null)
  and exists (select 1 from signon.user_permissions p
              where p.user_uid = g.user_uid and p.application_id = g.application_id and p.permission = 'signin')`;

function tokenValues(tokens: NewTokens): unknown[] {
  return [tokens.accessTokenHash, tokens.refreshTokenHash, tokens.accessTokenExpiresAt.toISOString(), tokens.now.toISOString(), tokens.ip, tokens.userAgent];
}

const exchangeCodeStatement = {
  name: "signon_exchange_code",
  text: `
    with used as (
      update signon.grants g set code_used_at = $4::timestamptz
       where g.code_hash = $7 and g.application_id = $8
         and g.code_used_at is null and g.revoked_at is null and g.code_expires_at > $4::timestamptz
         and (g.redirect_uri is null or g.redirect_uri = any($9::text[]))
         and ((g.code_challenge is null and not $11::boolean) or g.code_challenge = $10)
         and ${userMaySignIn}
      returning g.id as grant_id, g.user_uid, g.application_id, g.scope, g.nonce, g.auth_time, g.amr
    )
    ${storeTokensFrom("used", "tokens_issued")}`,
};

/**
 * The whole successful `authorization_code` exchange in one statement (so one
 * round trip, atomic without an explicit transaction): uses the code only if
 * every check passes (unused, unexpired, this application, one of the
 * accepted redirect URIs, matching PKCE challenge, user still allowed in) and
 * stores the new tokens. `null` when any check fails; the caller then finds out why.
 */
export async function exchangeCodeInOneStatement(
  statements: StatementRunner,
  code: { codeHash: string; applicationId: string; redirectUris: readonly string[]; verifierChallenge: string | null; verifierSent: boolean },
  tokens: NewTokens,
): Promise<Issued | null> {
  const [row] = await statements.run<IssuedRow>(exchangeCodeStatement, [
    ...tokenValues(tokens),
    code.codeHash,
    code.applicationId,
    code.redirectUris,
    code.verifierChallenge,
    code.verifierSent,
  ]);
  return issuedFrom(row);
}

const rotateRefreshTokenStatement = {
  name: "signon_rotate_refresh_token",
  text: `
    with rotated as (
      update signon.refresh_tokens r set rotated_at = $4::timestamptz
        from signon.grants g
       where r.token_hash = $7 and r.rotated_at is null and r.revoked_at is null
         and g.id = r.grant_id and g.application_id = $8 and g.revoked_at is null
         and ${userMaySignIn}
      returning g.id as grant_id, g.user_uid, g.application_id, g.scope, g.nonce, g.auth_time, g.amr
    )
    ${storeTokensFrom("rotated", "tokens_refreshed")}`,
};

/**
 * The whole successful refresh in one statement: retires a live refresh token
 * of the application whose user may still sign in, and stores the new pair.
 * `null` when the token is not live (or the user may no longer sign in); the
 * caller then finds out why, and detects reuse.
 */
export async function rotateRefreshTokenInOneStatement(
  statements: StatementRunner,
  refresh: { tokenHash: string; applicationId: string },
  tokens: NewTokens,
): Promise<Issued | null> {
  const [row] = await statements.run<IssuedRow>(rotateRefreshTokenStatement, [
    ...tokenValues(tokens),
    refresh.tokenHash,
    refresh.applicationId,
  ]);
  return issuedFrom(row);
}
