import { randomUUID } from "node:crypto";
import type { SignonDatabase } from "../db/database.js";
import type { Grant } from "../repositories/grants.js";
import { insertAccessToken, insertRefreshToken } from "../repositories/tokens.js";
import { randomHex, sha256Hex } from "../security/random.js";

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
 * Issues a new access token and refresh token under a grant. Only their
 * SHA-256 digests are stored (S5).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.1
 */
export async function issueTokens(db: SignonDatabase, grant: Grant, now: Date): Promise<TokenResponse> {
  const accessToken = randomHex();
  const refreshToken = randomHex();
  await insertAccessToken(db, {
    id: randomUUID(),
    grantId: grant.id,
    tokenHash: sha256Hex(accessToken),
    userUid: grant.userUid,
    applicationId: grant.applicationId,
    expiresAt: new Date(now.getTime() + accessTokenLifetimeSeconds * 1000),
    createdAt: now,
  });
  await insertRefreshToken(db, { id: randomUUID(), grantId: grant.id, tokenHash: sha256Hex(refreshToken), createdAt: now });
  return {
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: accessTokenLifetimeSeconds,
    refresh_token: refreshToken,
    created_at: Math.floor(now.getTime() / 1000),
  };
}
