import type { SignonClientConfig } from "../config.js";
import { codeChallengeS256, createCodeVerifier } from "../oauth/pkce.js";
import { randomToken } from "../oauth/random.js";
import { newSessionId, sessionIdDigest } from "../sessions/session-id.js";

/** A started sign-in: the browser gets the session cookie and is sent to `authorizationUrl`. */
export interface StartedSignIn {
  sessionId: string;
  authorizationUrl: string;
  expiresAt: number;
}

/**
 * Starts the Authorization Code flow: records a pending sign-in (fresh `state`
 * and PKCE verifier) in a new session and builds the authorization request.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.3
 */
export async function startSignIn(config: SignonClientConfig, returnTo: string): Promise<StartedSignIn> {
  const now = config.clock.now();
  const sessionId = newSessionId();
  const state = randomToken();
  const codeVerifier = createCodeVerifier();
  const expiresAt = now + config.signInTtlSeconds * 1000;
  await config.sessionStore.create({
    idDigest: sessionIdDigest(sessionId),
    uid: null,
    signIn: { state, codeVerifier, returnTo: safeReturnPath(returnTo) },
    tokens: null,
    createdAt: now,
    expiresAt,
  });
  const url = new URL(`${config.signonUrl}${config.paths.authorize}`);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", config.clientId);
  url.searchParams.set("redirect_uri", config.redirectUri);
  url.searchParams.set("state", state);
  url.searchParams.set("code_challenge", codeChallengeS256(codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  return { sessionId, authorizationUrl: url.toString(), expiresAt };
}

/**
 * `path` when it is a path on this site, else `/`: a return address from the
 * query string must never send the browser to another host.
 */
export function safeReturnPath(path: string | undefined): string {
  if (path === undefined || !path.startsWith("/") || path.startsWith("//")) return "/";
  const hasBackslashOrControl = [...path].some((c) => c === "\\" || c.charCodeAt(0) < 0x20 || c === "\u007f");
  return hasBackslashOrControl ? "/" : path;
}
