import type { SignonClientConfig } from "../config.js";
import { SignInRejectedError, SignonRefusedError } from "../errors.js";
import { exchangeAuthorizationCode } from "../oauth/token-endpoint.js";
import { constantTimeEqual } from "../oauth/random.js";
import { fetchSignonUser } from "../oauth/user-info.js";
import { newSessionId, sessionIdDigest } from "../sessions/session-id.js";
import { sessionTokens } from "../sessions/session-tokens.js";
import { userDetailsFromJson, type SignonUser } from "../user.js";

/** The query string of the callback Sign-on sends the browser to. */
export interface CallbackParameters {
  code?: string | undefined;
  state?: string | undefined;
  error?: string | undefined;
}

/** A finished sign-in: the browser gets the new session cookie and goes to `returnTo`. */
export interface CompletedSignIn {
  sessionId: string;
  expiresAt: number;
  user: SignonUser;
  returnTo: string;
}

/**
 * Finishes the Authorization Code flow: checks `state` against the pending
 * sign-in of this browser, exchanges the code (with the PKCE verifier and the
 * client credentials), fetches `/user.json`, stores the user and opens a
 * signed-in session under a new id. The pending sign-in is used up either way.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-10.12
 */
export async function completeSignIn(
  config: SignonClientConfig,
  pendingSessionId: string | undefined,
  callback: CallbackParameters,
): Promise<CompletedSignIn> {
  const now = config.clock.now();
  const pending =
    pendingSessionId === undefined ? null : await config.sessionStore.find(sessionIdDigest(pendingSessionId), now);
  if (!pending?.signIn) throw new SignInRejectedError("no_sign_in_started");
  await config.sessionStore.delete(pending.idDigest);
  const { state, codeVerifier, returnTo } = pending.signIn;
  if (callback.state === undefined || !constantTimeEqual(callback.state, state)) {
    throw new SignInRejectedError("state_mismatch");
  }
  if (callback.error !== undefined) throw new SignInRejectedError("authorization_denied");
  if (callback.code === undefined || callback.code === "") throw new SignInRejectedError("missing_code");

  const tokens = await exchangeAuthorizationCode(config, callback.code, codeVerifier);
  const userJson = await fetchSignonUser(config, tokens.accessToken);
  if (userJson === null) throw new SignonRefusedError("invalid_token", 401);
  if (userJson.disabled === true) throw new SignInRejectedError("authorization_denied");
  const user = await config.userStore.upsert(userDetailsFromJson(userJson), { remotelySignedOut: false });

  const signedInAt = config.clock.now();
  const sessionId = newSessionId();
  const expiresAt = signedInAt + config.sessionTtlSeconds * 1000;
  await config.sessionStore.create({
    idDigest: sessionIdDigest(sessionId),
    uid: user.uid,
    signIn: null,
    tokens: sessionTokens(config, tokens, signedInAt),
    createdAt: signedInAt,
    expiresAt,
  });
  return { sessionId, expiresAt, user, returnTo };
}
