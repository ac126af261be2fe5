import type { SignonClientConfig } from "../config.js";
import type { IssuedTokens } from "../oauth/token-endpoint.js";
import type { SessionTokens } from "../storage/session-store.js";

/**
 * The stored form of freshly issued tokens: when the access token expires
 * (from `expires_in`) and when to refresh it (the configured margin before,
 * at most half the lifetime, so a short-lived token is not refreshed at once).
 */
export function sessionTokens(config: SignonClientConfig, issued: IssuedTokens, issuedAt: number): SessionTokens {
  const lifetimeMs = issued.expiresInSeconds * 1000;
  const marginMs = Math.min(config.refreshMarginSeconds * 1000, lifetimeMs / 2);
  return {
    accessToken: issued.accessToken,
    refreshToken: issued.refreshToken,
    expiresAt: issuedAt + lifetimeMs,
    refreshAt: issuedAt + lifetimeMs - marginMs,
  };
}
