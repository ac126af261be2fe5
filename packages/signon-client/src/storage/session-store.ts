/** A sign-in this browser started and has not finished. */
export interface PendingSignIn {
  state: string;
  codeVerifier: string;
  /** Local path to return to after signing in. */
  returnTo: string;
}

/** The tokens Sign-on issued for a signed-in session. */
export interface SessionTokens {
  accessToken: string;
  refreshToken: string | null;
  /** When the access token expires (ms since the epoch), from `expires_in`. */
  expiresAt: number;
  /** When to refresh it (a margin before `expiresAt`). */
  refreshAt: number;
}

/**
 * A browser session, stored server-side. The cookie carries the session id;
 * storage only ever sees its SHA-256 digest.
 */
export interface SessionRecord {
  idDigest: string;
  /** The signed-in user; `null` while a sign-in is pending. */
  uid: string | null;
  signIn: PendingSignIn | null;
  tokens: SessionTokens | null;
  createdAt: number;
  expiresAt: number;
}

/**
 * Where browser sessions live. Implementations: `MemorySessionStore` and
 * `PostgresSessionStore`. Times are milliseconds since the epoch.
 */
export interface SessionStore {
  create(session: SessionRecord): Promise<void>;
  /** The session, or `null` when it does not exist or has expired at `now`. */
  find(idDigest: string, now: number): Promise<SessionRecord | null>;
  delete(idDigest: string): Promise<void>;
  /** Ends every session of the user; returns how many there were. */
  deleteForUser(uid: string): Promise<number>;
  /**
   * Claims the right to refresh the session's tokens until `until`: succeeds
   * only when the stored tokens are due (`refreshAt <= now`) and no other
   * request holds an unexpired claim. Atomic across processes, so a refresh
   * token is presented once (presenting it twice revokes the whole family),
   * and a request that read the tokens before another refreshed them loses.
   */
  claimRefresh(idDigest: string, now: number, until: number): Promise<boolean>;
  /** Stores refreshed tokens and releases the refresh claim. */
  saveTokens(idDigest: string, tokens: SessionTokens): Promise<void>;
  /** Removes sessions expired at `now`; returns how many. */
  deleteExpired(now: number): Promise<number>;
}
