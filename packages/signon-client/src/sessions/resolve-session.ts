import type { SignonClientConfig } from "../config.js";
import { SignonRefusedError } from "../errors.js";
import { refreshAccessToken } from "../oauth/token-endpoint.js";
import { fetchSignonUser } from "../oauth/user-info.js";
import type { SessionRecord } from "../storage/session-store.js";
import { userDetailsFromJson, type SignonUser } from "../user.js";
import { sessionIdDigest } from "./session-id.js";
import { sessionTokens } from "./session-tokens.js";

/** Where the client reports what it did not let fail the request. */
export interface WarningLogger {
  warn(details: object, message: string): void;
}

/** A signed-in browser session and its user. */
export interface SignedInSession {
  session: SessionRecord;
  user: SignonUser;
}

/**
 * Resolves a session cookie to a signed-in user, or `null`. Ends the session
 * when the user is gone, disabled or signed out by Sign-on (a reauth push).
 * When the access token is due for refresh, refreshes it first (see
 * `refreshSessionTokens`).
 */
export async function resolveSession(
  config: SignonClientConfig,
  sessionId: string,
  log: WarningLogger,
): Promise<SignedInSession | null> {
  const now = config.clock.now();
  const session = await config.sessionStore.find(sessionIdDigest(sessionId), now);
  if (!session || session.uid === null) return null;
  const user = await config.userStore.findByUid(session.uid);
  if (!user || user.disabled || user.remotelySignedOut) {
    await config.sessionStore.delete(session.idDigest);
    return null;
  }
  if (session.tokens && now >= session.tokens.refreshAt) {
    return refreshSessionTokens(config, { session, user }, log);
  }
  return { session, user };
}

/** How long one request may hold the right to refresh a session's tokens. */
const REFRESH_CLAIM_MS = 30_000;

/**
 * Refreshes the session's access token with its refresh token (which Sign-on
 * rotates), then re-reads `/user.json` with the new token so the stored user
 * is current even if a push was missed. Only the request that claims the
 * refresh presents the refresh token; concurrent ones carry on with the
 * still-valid current token. A refused refresh (revoked, suspended) ends the
 * session; an unreachable Sign-on keeps it and the next request tries again.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 * @see https://www.rfc-editor.org/rfc/rfc9700#section-4.14.2
 */
export async function refreshSessionTokens(
  config: SignonClientConfig,
  current: SignedInSession,
  log: WarningLogger,
): Promise<SignedInSession | null> {
  const now = config.clock.now();
  if (!current.session.tokens?.refreshToken) return current;
  if (!(await config.sessionStore.claimRefresh(current.session.idDigest, now, now + REFRESH_CLAIM_MS))) return current;
  // Read again under the claim: another request may have refreshed since this one read the session.
  const session = await config.sessionStore.find(current.session.idDigest, now);
  const refreshToken = session?.tokens?.refreshToken;
  if (!session || !refreshToken) return current;
  try {
    const issued = await refreshAccessToken(config, refreshToken);
    // Without a new refresh token the old one stays valid (RFC 6749 §6); Sign-on always rotates.
    const tokens = sessionTokens(config, { ...issued, refreshToken: issued.refreshToken ?? refreshToken }, config.clock.now());
    await config.sessionStore.saveTokens(session.idDigest, tokens);
    const userJson = await fetchSignonUser(config, tokens.accessToken);
    if (userJson === null || userJson.disabled === true) {
      await config.sessionStore.delete(session.idDigest);
      return null;
    }
    const user = await config.userStore.upsert(userDetailsFromJson(userJson));
    if (user.remotelySignedOut) {
      await config.sessionStore.delete(session.idDigest);
      return null;
    }
    return { session: { ...session, tokens }, user };
  } catch (error) {
    if (error instanceof SignonRefusedError) {
      await config.sessionStore.delete(session.idDigest);
      return null;
    }
    log.warn({ err: error, uid: session.uid }, "Sign-on token refresh failed; keeping the session");
    return current;
  }
}
