import { hash } from "node:crypto";
import type { SignonContext } from "../context.js";
import type { GrantOpenId } from "../repositories/token-exchange.js";
import { signJwt } from "./signed-jwt.js";
import { idTokenLifetimeSeconds, liveSigningKey, signingAlgorithms, type SigningAlgorithm } from "./signing-keys.js";

/** The `amr` values Sign-on uses (RFC 8176): a password, a one-time code, a hardware key (passkey). */
export const amrValuesSupported = ["pwd", "otp", "hwk"] as const;

/** The claims of the ID tokens Sign-on issues. */
export const idTokenClaimsSupported = ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "at_hash", "amr", "name", "email", "email_verified", "permissions"];

/** The algorithm an application's tokens are signed with (ES256 unless it chose RS256). */
export function applicationAlgorithm(alg: string): SigningAlgorithm {
  return signingAlgorithms.find((known) => known === alg) ?? "ES256";
}

/**
 * The `at_hash` of an access token: the left half of its SHA-256 digest
 * (both ES256 and RS256 hash with SHA-256), base64url.
 *
 * @see https://openid.net/specs/openid-connect-core-1_0.html#CodeIDToken
 */
export function accessTokenHash(accessToken: string): string {
  return hash("sha256", accessToken, "buffer").subarray(0, 16).toString("base64url");
}

/**
 * Signs an ID token for tokens just issued under an OpenID Connect grant:
 * `iss`, `sub` (the user's uid), `aud` (the client id), `exp`, `iat`,
 * `auth_time`, `nonce` (on the code exchange, when the request sent one),
 * `at_hash` and `amr`, with the application's algorithm and the live key of it.
 *
 * @see https://openid.net/specs/openid-connect-core-1_0.html#IDToken
 * @see https://openid.net/specs/openid-connect-core-1_0.html#RefreshTokenResponse
 */
export async function signIdToken(
  ctx: SignonContext,
  token: { clientId: string; alg: string; userUid: string; openid: GrantOpenId; accessToken: string; now: Date; refresh: boolean },
): Promise<string> {
  const key = await liveSigningKey(ctx, applicationAlgorithm(token.alg));
  const iat = Math.floor(token.now.getTime() / 1000);
  const claims: Record<string, unknown> = {
    iss: ctx.config.publicUrl,
    sub: token.userUid,
    aud: token.clientId,
    iat,
    exp: iat + idTokenLifetimeSeconds,
    auth_time: Math.floor((token.openid.authTime ?? token.now).getTime() / 1000),
    at_hash: accessTokenHash(token.accessToken),
    amr: token.openid.amr ?? ["pwd"],
  };
  // A refreshed ID token carries no nonce (Core §12.2).
  if (token.openid.nonce !== null && !token.refresh) claims.nonce = token.openid.nonce;
  return signJwt("JWT", claims, key);
}

/** Whether a grant's scope holds `name`. */
export function scopeHolds(scope: string, name: string): boolean {
  return scope.split(" ").includes(name);
}
