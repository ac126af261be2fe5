import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { ClientOfRequest } from "../repositories/client-authentication.js";
import { revokeGrant } from "../repositories/grants.js";
import { findRefreshToken, rotateRefreshTokenOfApplication } from "../repositories/tokens.js";
import { rotateRefreshTokenInOneStatement } from "../repositories/token-exchange.js";
import { sha256Hex } from "../security/random.js";
import { authenticateClient, concludeClientAuthentication, presentedClient, type ClientToAuthenticate } from "./authenticate-client.js";
import { InvalidGrantError, InvalidRequestError, type OAuthError } from "./errors.js";
import { issueTokens, newTokenRecord, newTokenValues, tokenResponse, type IssuedTokens } from "./issue-tokens.js";

/**
 * The `refresh_token` grant with rotation (S10): a new access token and a new
 * refresh token; the presented refresh token dies. Presenting a dead refresh
 * token again revokes every token of its grant. The client is authenticated
 * (as `authenticateClient`) in the same statement as the rotation. Returns
 * the client's application with the tokens.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 * @see https://www.rfc-editor.org/rfc/rfc9700#section-4.14.2
 */
export async function refreshAccessToken(
  ctx: SignonContext,
  client: ClientToAuthenticate,
  refreshToken: string | undefined,
  origin: RequestOrigin,
): Promise<{ application: ClientOfRequest; issued: IssuedTokens }> {
  if (!refreshToken) {
    await authenticateClient(ctx, client.credentials, origin, client.onFlood);
    throw new InvalidRequestError("refresh_token is required");
  }
  const tokenHash = sha256Hex(refreshToken);
  const now = ctx.now();

  const fresh = newTokenValues(now);
  const exchanged = await rotateRefreshTokenInOneStatement(ctx.statements, presentedClient(client.credentials, origin), { tokenHash }, newTokenRecord(fresh, now, origin));
  const application = await concludeClientAuthentication(ctx, client.credentials, origin, now, exchanged.client, client.onFlood);
  const { issued } = exchanged;
  if (issued) {
    return { application, issued: { response: tokenResponse(fresh.accessToken, fresh.refreshToken, now), userUid: issued.userUid, openid: issued.openid } };
  }

  // Nothing live to rotate: work out why, in a transaction, and detect reuse.
  const outcome = await ctx.db.transaction(async (tx): Promise<IssuedTokens | OAuthError> => {
    const rotated = await rotateRefreshTokenOfApplication(tx, tokenHash, application.id, now);
    if (!rotated) {
      // Not live: unknown, another client's, revoked, or already used (then the family dies).
      const found = await findRefreshToken(tx, tokenHash);
      if (!found || found.grant.applicationId !== application.id) return new InvalidGrantError("The refresh token is not valid");
      if (found.token.revokedAt !== null || found.grant.revokedAt !== null) return new InvalidGrantError("The refresh token has been revoked");
      await revokeGrant(tx, found.grant.id, now);
      await audit(tx, { action: "refresh_token_reused", at: now, subjectUid: found.grant.userUid, applicationId: application.id, origin });
      return new InvalidGrantError("The refresh token has already been used");
    }
    if (rotated.userSuspended || !rotated.userHoldsSignin) return new InvalidGrantError("The user may no longer sign in to this application");
    return issueTokens(tx, rotated.grant, now, { action: "tokens_refreshed", origin });
  });
  if (outcome instanceof Error) throw outcome;
  return { application, issued: outcome };
}
