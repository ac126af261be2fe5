import type { RequestOrigin } from "../context.js";
import type { SignonDatabase } from "../db/database.js";
import type { Grant } from "../repositories/grants.js";
import { insertTokenPair } from "../repositories/tokens.js";
import { randomHex, sha256Hex } from "../security/random.js";
import { storedUserAgent, type AuditAction } from "../audit.js";
import type { GrantOpenId, NewTokens } from "../repositories/token-exchange.js";

/** Access tokens live two hours (signon.md "Tokens"). */
export const accessTokenLifetimeSeconds = 7200;

/** The successful token response body of S4. */
export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  created_at: number;
}

/**
 * Tokens issued under a grant: the S4 response, whom they are for, and the
 * grant's OpenID Connect part (`null` for a plain OAuth 2 grant), from which
 * the route adds an ID token.
 */
export interface IssuedTokens {
  response: TokenResponse;
  userUid: string;
  openid: GrantOpenId | null;
}

/** The OpenID Connect part of a stored grant, or `null`. */
export function grantOpenId(grant: Pick<Grant, "scope" | "nonce" | "authTime" | "amr">): GrantOpenId | null {
  return grant.scope === null ? null : { scope: grant.scope, nonce: grant.nonce, authTime: grant.authTime, amr: grant.amr };
}

/** Fresh token values and what the database keeps of them: the two tokens are the halves of one 64-byte draw from the CSPRNG. */
export function newTokenValues(now: Date): { accessToken: string; refreshToken: string; accessTokenExpiresAt: Date } {
  const drawn = randomHex(64);
  return { accessToken: drawn.slice(0, 64), refreshToken: drawn.slice(64), accessTokenExpiresAt: new Date(now.getTime() + accessTokenLifetimeSeconds * 1000) };
}

/** What a one-statement exchange stores for `fresh` tokens: their digests (S5), expiry and the audit context. */
export function newTokenRecord(fresh: ReturnType<typeof newTokenValues>, now: Date, origin: RequestOrigin): NewTokens {
  return {
    accessTokenHash: sha256Hex(fresh.accessToken),
    refreshTokenHash: sha256Hex(fresh.refreshToken),
    accessTokenExpiresAt: fresh.accessTokenExpiresAt,
    now,
    ip: origin.ip,
    userAgent: storedUserAgent(origin),
  };
}

/** The S4 response body for tokens issued at `now`. */
export function tokenResponse(accessToken: string, refreshToken: string, now: Date): TokenResponse {
  return {
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: accessTokenLifetimeSeconds,
    refresh_token: refreshToken,
    created_at: Math.floor(now.getTime() / 1000),
  };
}

/**
 * Issues a new access token and refresh token under a grant and records the
 * audit event. Only the tokens' SHA-256 digests are stored (S5).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.1
 */
export async function issueTokens(
  db: SignonDatabase,
  grant: Grant,
  now: Date,
  audit: { action: AuditAction; origin: RequestOrigin },
): Promise<IssuedTokens> {
  const { accessToken, refreshToken, accessTokenExpiresAt } = newTokenValues(now);
  await insertTokenPair(
    db,
    {
      grant,
      accessTokenHash: sha256Hex(accessToken),
      refreshTokenHash: sha256Hex(refreshToken),
      accessTokenExpiresAt,
      createdAt: now,
    },
    {
      action: audit.action,
      occurredAt: now,
      subjectUid: grant.userUid,
      applicationId: grant.applicationId,
      ip: audit.origin.ip,
      userAgent: storedUserAgent(audit.origin),
    },
  );
  return { response: tokenResponse(accessToken, refreshToken, now), userUid: grant.userUid, openid: grantOpenId(grant) };
}
