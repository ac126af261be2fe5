import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { ClientOfRequest } from "../repositories/client-authentication.js";
import { findGrantByCodeHash, revokeGrant, useCode } from "../repositories/grants.js";
import type { UsedGrant } from "../repositories/tokens.js";
import { authenticateClient, concludeClientAuthentication, presentedClient, type ClientToAuthenticate } from "./authenticate-client.js";
import { exchangeCodeInOneStatement } from "../repositories/token-exchange.js";
import { sha256Hex } from "../security/random.js";
import { InvalidGrantError, InvalidRequestError, type OAuthError } from "./errors.js";
import { issueTokens, newTokenRecord, newTokenValues, tokenResponse, type IssuedTokens } from "./issue-tokens.js";
import { s256ChallengeOf, verifyS256 } from "./pkce.js";
import { redirectUriBinds, withoutAuthorizationResponseParameters } from "./redirect-uri.js";

/** The `authorization_code` grant's parameters. */
export interface CodeExchange {
  code: string | undefined;
  redirectUri: string | undefined;
  codeVerifier: string | undefined;
}

/**
 * Exchanges an authorization code for tokens (S6). The code is used at most
 * once; presenting it again fails with `invalid_grant` and revokes every token
 * issued from it. The client is authenticated (as `authenticateClient`) in
 * the same statement: a valid exchange is one atomic statement, one round
 * trip; when that finds nothing to exchange for an authenticated client, a
 * transaction works out why (and handles a replay). Returns the client's
 * application with the tokens.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.3
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-10.5
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.6
 */
export async function exchangeAuthorizationCode(
  ctx: SignonContext,
  client: ClientToAuthenticate,
  request: CodeExchange,
  origin: RequestOrigin,
): Promise<{ application: ClientOfRequest; issued: IssuedTokens }> {
  if (!request.code) {
    await authenticateClient(ctx, client.credentials, origin, client.onFlood);
    throw new InvalidRequestError("code is required");
  }
  const codeHash = sha256Hex(request.code);
  const now = ctx.now();

  const fresh = newTokenValues(now);
  const exchanged = await exchangeCodeInOneStatement(
    ctx.statements,
    presentedClient(client.credentials, origin),
    {
      codeHash,
      redirectUris: redirectUriCandidates(request.redirectUri),
      verifierChallenge: request.codeVerifier === undefined ? null : s256ChallengeOf(request.codeVerifier),
      verifierSent: request.codeVerifier !== undefined,
    },
    newTokenRecord(fresh, now, origin),
  );
  const application = await concludeClientAuthentication(ctx, client.credentials, origin, now, exchanged.client, client.onFlood);
  const { issued } = exchanged;
  if (issued) {
    return { application, issued: { response: tokenResponse(fresh.accessToken, fresh.refreshToken, now), userUid: issued.userUid, openid: issued.openid } };
  }

  const outcome = await ctx.db.transaction(async (tx): Promise<IssuedTokens | OAuthError> => {
    const used = await useCode(tx, codeHash, application.id, now);
    if (!used) {
      const earlier = await findGrantByCodeHash(tx, codeHash);
      if (earlier && earlier.applicationId === application.id && earlier.codeUsedAt !== null) {
        await revokeGrant(tx, earlier.id, now);
        await audit(tx, { action: "authorization_code_replayed", at: now, subjectUid: earlier.userUid, applicationId: application.id, origin });
        return new InvalidGrantError("The authorization code has already been used");
      }
      return new InvalidGrantError("The authorization code is not valid");
    }
    const problem = codeProblem(used, request, now);
    if (problem) return problem;
    return issueTokens(tx, used.grant, now, { action: "tokens_issued", origin });
  });
  if (outcome instanceof Error) throw outcome;
  return { application, issued: outcome };
}

/** The stored `redirect_uri` values the one-statement exchange accepts; the fallback applies the whole of `redirectUriBinds`. */
function redirectUriCandidates(presented: string | undefined): string[] {
  if (presented === undefined) return [];
  return [presented, withoutAuthorizationResponseParameters(presented)];
}

/** Step: what is wrong with a just-used code for this request, if anything. */
export function codeProblem({ grant, userSuspended, userHoldsSignin }: UsedGrant, request: CodeExchange, now: Date): OAuthError | null {
  if (grant.revokedAt !== null || grant.codeExpiresAt === null || grant.codeExpiresAt <= now) {
    // A suspension revokes the person's grants, unused codes included: what stops the exchange is the account.
    return userSuspended ? suspendedAccount() : new InvalidGrantError("The authorization code has expired");
  }
  if (grant.redirectUri !== null && !redirectUriBinds(request.redirectUri, grant.redirectUri)) {
    return new InvalidGrantError("redirect_uri does not match the authorization request");
  }
  if (grant.codeChallenge !== null) {
    if (!request.codeVerifier) return new InvalidGrantError("code_verifier is required");
    if (!verifyS256(request.codeVerifier, grant.codeChallenge)) return new InvalidGrantError("code_verifier does not match");
  } else if (request.codeVerifier !== undefined) {
    return new InvalidGrantError("code_verifier was sent but the authorization request had no code_challenge");
  }
  if (userSuspended) return suspendedAccount();
  if (!userHoldsSignin) return new InvalidGrantError("The user may no longer sign in to this application");
  return null;
}

function suspendedAccount(): OAuthError {
  return new InvalidGrantError("The user's account is suspended, so it cannot sign in");
}
