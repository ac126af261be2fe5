import type { StatementRunner } from "../db/statements.js";
import { clientLookup, foundClientOfRequest, type ClientOfRequest, type ClientOfRequestRow, type FoundClient } from "./client-authentication.js";

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

/** A row of the one-statement exchanges: what authenticating the client needs of it, and what was issued (all `null` when nothing was). */
type ExchangeRow = ClientOfRequestRow & {
  grant_id: string | null;
  user_uid: string;
  scope: string | null;
  nonce: string | null;
  auth_time: Date | null;
  amr: string[] | null;
};

/** What a one-statement exchange found of the client, and what it issued (`null`: nothing, the caller finds out why). */
export interface Exchanged {
  client: FoundClient<ClientOfRequest>;
  issued: Issued | null;
}

function exchangedFrom(row: ExchangeRow | undefined): Exchanged {
  if (!row || row.grant_id === null) return { client: foundClientOfRequest(row), issued: null };
  const openid = row.scope === null ? null : { scope: row.scope, nonce: row.nonce, authTime: row.auth_time, amr: row.amr };
  return { client: foundClientOfRequest(row), issued: { grantId: row.grant_id, userUid: row.user_uid, openid } };
}

/** The client presenting credentials, for a statement that authenticates it before acting for it. */
export interface PresentedClient {
  clientId: string;
  /** Its failure counters' keys and their limit (see `clientLookupValues`). */
  keys: readonly string[];
  maxFailures: number;
  /** SHA-256 digest of the presented secret. */
  secretHash: string;
}

// Parameters $1–$6 are the new tokens (see tokenValues), $7–$10 the client (see clientValues); the statements' own start at $11.
const authenticatedClient = `
    with client as (${clientLookup({ clientId: "$7", keys: "$8", now: "$4", maxFailures: "$9" })}
    ), authenticated as (
      select id from client where id is not null and client_secret_hash = $10 and not retired and blocked_until is null
    )`;

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
    select client.id, client.name, client.client_id, client.client_secret_hash, client.retired, client.id_token_signed_response_alg,
           client.blocked_until, ${source}.grant_id, ${source}.user_uid, ${source}.scope, ${source}.nonce, ${source}.auth_time, ${source}.amr
      from client left join ${source} on true`;

const userMaySignIn = `
  exists (select 1 from signon.users u where u.uid = g.user_uid and u.suspended_at is null)
  and exists (select 1 from signon.user_permissions p
              where p.user_uid = g.user_uid and p.application_id = g.application_id and p.permission = 'signin')`;

function tokenValues(tokens: NewTokens): unknown[] {
  return [tokens.accessTokenHash, tokens.refreshTokenHash, tokens.accessTokenExpiresAt.toISOString(), tokens.now.toISOString(), tokens.ip, tokens.userAgent];
}

function clientValues(client: PresentedClient): unknown[] {
  return [client.clientId, client.keys, client.maxFailures, client.secretHash];
}

const exchangeCodeStatement = {
  name: "signon_exchange_code",
  text: `${authenticatedClient}, used as (
      update signon.grants g set code_used_at = $4::timestamptz
       where g.code_hash = $11 and g.application_id = (select id from authenticated)
         and g.code_used_at is null and g.revoked_at is null and g.code_expires_at > $4::timestamptz
         and (g.redirect_uri is null or g.redirect_uri = any($12::text[]))
         and ((g.code_challenge is null and not $14::boolean) or g.code_challenge = $13)
         and ${userMaySignIn}
      returning g.id as grant_id, g.user_uid, g.application_id, g.scope, g.nonce, g.auth_time, g.amr
    )
    ${storeTokensFrom("used", "tokens_issued")}`,
};

/**
 * Client authentication and the whole successful `authorization_code`
 * exchange in one statement (so one round trip, atomic without an explicit
 * transaction): looks the client up, and only if its secret matches, it is
 * not retired and its source not blocked, uses the code if every check passes
 * (unused, unexpired, this client's, one of the accepted redirect URIs,
 * matching PKCE challenge, user still allowed in) and stores the new tokens.
 * The caller concludes the client's authentication from `client` (which
 * decides as the statement did); `issued` is `null` when anything failed.
 */
export async function exchangeCodeInOneStatement(
  statements: StatementRunner,
  client: PresentedClient,
  code: { codeHash: string; redirectUris: readonly string[]; verifierChallenge: string | null; verifierSent: boolean },
  tokens: NewTokens,
): Promise<Exchanged> {
  const [row] = await statements.run<ExchangeRow>(exchangeCodeStatement, [
    ...tokenValues(tokens),
    ...clientValues(client),
    code.codeHash,
    code.redirectUris,
    code.verifierChallenge,
    code.verifierSent,
  ]);
  return exchangedFrom(row);
}

const rotateRefreshTokenStatement = {
  name: "signon_rotate_refresh_token",
  text: `${authenticatedClient}, rotated as (
      update signon.refresh_tokens r set rotated_at = $4::timestamptz
        from signon.grants g
       where r.token_hash = $11 and r.rotated_at is null and r.revoked_at is null
         and g.id = r.grant_id and g.application_id = (select id from authenticated) and g.revoked_at is null
         and ${userMaySignIn}
      returning g.id as grant_id, g.user_uid, g.application_id, g.scope, g.nonce, g.auth_time, g.amr
    )
    ${storeTokensFrom("rotated", "tokens_refreshed")}`,
};

/**
 * Client authentication and the whole successful refresh in one statement:
 * as {@link exchangeCodeInOneStatement}, retires a live refresh token of the
 * authenticated client whose user may still sign in, and stores the new pair.
 * `issued` is `null` when the token is not live (or the user may no longer
 * sign in, or the client failed); the caller then finds out why, and detects reuse.
 */
export async function rotateRefreshTokenInOneStatement(
  statements: StatementRunner,
  client: PresentedClient,
  refresh: { tokenHash: string },
  tokens: NewTokens,
): Promise<Exchanged> {
  const [row] = await statements.run<ExchangeRow>(rotateRefreshTokenStatement, [...tokenValues(tokens), ...clientValues(client), refresh.tokenHash]);
  return exchangedFrom(row);
}
