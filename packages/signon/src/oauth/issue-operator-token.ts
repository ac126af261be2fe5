import { randomUUID } from "node:crypto";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { AccountError, requireUserByEmail } from "../accounts/manage-users.js";
import { requireApplication } from "../applications/permissions.js";
import { insertGrant } from "../repositories/grants.js";
import { listPermissions } from "../repositories/permissions.js";
import { insertAccessToken } from "../repositories/tokens.js";
import { randomHex, sha256Hex } from "../security/random.js";

/** Pre-issued tokens live two years unless the operator says otherwise (S17). */
export const defaultIssuedTokenLifetimeSeconds = 2 * 365 * 24 * 3600;

/**
 * Issues a bearer token for a user on an application without a browser: the
 * profile's "implicit grant, issued in advance" for API users (S17), and for
 * any user when an operator asks. Audited (with `origin` when the request
 * came over HTTP). The token is only in the return value.
 */
export async function issueOperatorToken(
  ctx: SignonContext,
  request: { email: string; application: string; expiresInSeconds?: number | undefined },
  actorUid: string | null = null,
  origin: RequestOrigin | null = null,
): Promise<{ accessToken: string; expiresAt: Date; userUid: string; applicationId: string }> {
  const user = await requireUserByEmail(ctx, request.email);
  const application = await requireApplication(ctx, request.application);
  if (user.suspendedAt !== null) throw new AccountError(`${user.email} is suspended`);
  if (application.retired) throw new AccountError(`${application.name} is retired`);
  if (!(await listPermissions(ctx.db, user.uid, application.id)).includes("signin")) {
    throw new AccountError(`${user.email} does not hold signin on ${application.name}; grant it first`);
  }
  const lifetime = request.expiresInSeconds ?? defaultIssuedTokenLifetimeSeconds;
  if (!Number.isInteger(lifetime) || lifetime < 60 || lifetime > 10 * 365 * 24 * 3600) {
    throw new AccountError("expires-in is a whole number of seconds from 60 to ten years");
  }
  const accessToken = randomHex();
  const now = ctx.now();
  const expiresAt = new Date(now.getTime() + lifetime * 1000);
  await ctx.db.transaction(async (tx) => {
    const grant = await insertGrant(tx, { id: randomUUID(), kind: "issued", userUid: user.uid, applicationId: application.id, createdAt: now });
    await insertAccessToken(tx, {
      grantId: grant.id,
      tokenHash: sha256Hex(accessToken),
      userUid: user.uid,
      applicationId: application.id,
      expiresAt,
      createdAt: now,
    });
    await audit(tx, {
      action: "token_issued_by_operator",
      at: now,
      actorUid,
      subjectUid: user.uid,
      applicationId: application.id,
      origin,
      details: { api_user: user.isApiUser, expires_at: expiresAt.toISOString() },
    });
  });
  return { accessToken, expiresAt, userUid: user.uid, applicationId: application.id };
}
