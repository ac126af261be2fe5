import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { Application } from "../repositories/applications.js";
import { revokeGrant } from "../repositories/grants.js";
import { findAccessToken, findRefreshToken, revokeAccessToken } from "../repositories/tokens.js";
import { sha256Hex } from "../security/random.js";

/**
 * Revokes a token the client holds. An access token dies alone; a refresh
 * token takes its whole grant with it (RFC 7009 §2.1). Unknown tokens and
 * other clients' tokens are ignored, as the RFC asks, so the answer is the
 * same either way.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7009#section-2.1
 */
export async function revokeToken(ctx: SignonContext, application: Application, token: string, origin: RequestOrigin): Promise<void> {
  const tokenHash = sha256Hex(token);
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
    const access = await findAccessToken(tx, tokenHash);
    if (access && access.applicationId === application.id) {
      await revokeAccessToken(tx, access.tokenHash, now);
      await audit(tx, { action: "token_revoked", at: now, subjectUid: access.userUid, applicationId: application.id, origin, details: { type: "access_token" } });
      return;
    }
    const refresh = await findRefreshToken(tx, tokenHash);
    if (refresh && refresh.grant.applicationId === application.id) {
      await revokeGrant(tx, refresh.grant.id, now);
      await audit(tx, { action: "token_revoked", at: now, subjectUid: refresh.grant.userUid, applicationId: application.id, origin, details: { type: "refresh_token" } });
    }
  });
}
