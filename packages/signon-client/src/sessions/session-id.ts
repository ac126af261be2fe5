import { randomToken, sha256Hex } from "../oauth/random.js";

/** A new session id for the cookie: 32 random bytes, base64url. */
export function newSessionId(): string {
  return randomToken();
}

/** What storage keys a session by: the SHA-256 of its id, so a stolen table holds no live ids. */
export function sessionIdDigest(sessionId: string): string {
  return sha256Hex(sessionId);
}
