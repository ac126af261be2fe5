import { BearerTokenVerifier } from "./bearer/bearer-token-verifier.js";
import { resolveSignonClientConfig, type SignonClientConfig, type SignonClientOptions } from "./config.js";
import { receiveReauth } from "./receivers/receive-reauth.js";
import { receiveUserUpdate } from "./receivers/receive-user-update.js";
import { resolveSession, type SignedInSession, type WarningLogger } from "./sessions/resolve-session.js";
import { sessionIdDigest } from "./sessions/session-id.js";
import { completeSignIn, type CallbackParameters, type CompletedSignIn } from "./sign-in/complete-sign-in.js";
import { startSignIn, type StartedSignIn } from "./sign-in/start-sign-in.js";
import type { SignonUser, SignonUserDetails, SignonUserJson } from "./user.js";

/**
 * The framework-agnostic Sign-on client: sign-in, sessions, bearer checks and
 * push receivers, over the configured stores. The Fastify plugin is one user.
 */
export class SignonClient {
  readonly config: SignonClientConfig;
  readonly #bearer: BearerTokenVerifier;

  constructor(options: SignonClientOptions) {
    this.config = resolveSignonClientConfig(options);
    this.#bearer = new BearerTokenVerifier(this.config);
  }

  /** Starts a sign-in that returns to `returnTo` (a local path) when done. */
  startSignIn(returnTo: string): Promise<StartedSignIn> {
    return startSignIn(this.config, returnTo);
  }

  /** Finishes a sign-in from the callback's query string. */
  completeSignIn(pendingSessionId: string | undefined, callback: CallbackParameters): Promise<CompletedSignIn> {
    return completeSignIn(this.config, pendingSessionId, callback);
  }

  /** The signed-in user of a session id, refreshing tokens when due; `null` when not signed in. */
  resolveSession(sessionId: string, log: WarningLogger): Promise<SignedInSession | null> {
    return resolveSession(this.config, sessionId, log);
  }

  /** Ends a session here; Sign-on's own session ends on its page at `signonSignOutUrl`. */
  signOut(sessionId: string): Promise<void> {
    return this.config.sessionStore.delete(sessionIdDigest(sessionId));
  }

  /** The user of an API bearer token, or `null` when Sign-on rejects it (cached briefly). */
  verifyBearerToken(token: string): Promise<SignonUserDetails | null> {
    return this.#bearer.verify(token);
  }

  /** Applies a permissions-changed push; the user's remembered bearer-token answers are dropped at once. */
  receiveUserUpdate(user: SignonUserJson): Promise<SignonUser> {
    this.#bearer.forgetUser(user.uid);
    return receiveUserUpdate(this.config.userStore, user);
  }

  /** Applies a reauth push; returns how many sessions ended. The user's remembered bearer-token answers are dropped at once. */
  receiveReauth(uid: string): Promise<number> {
    this.#bearer.forgetUser(uid);
    return receiveReauth(this.config.userStore, this.config.sessionStore, uid);
  }

  /** In mock mode (`mockUser`), the stand-in every request is signed in as; else `null`. */
  get mockUser(): SignonUserDetails | null {
    return this.config.mockUser;
  }

  /** Where to send the browser after it signed out here. */
  get signonSignOutUrl(): string {
    return `${this.config.signonUrl}${this.config.paths.signOut}`;
  }
}
