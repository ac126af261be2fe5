import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { grantPermissions } from "../applications/permissions.js";
import { pushesCommitted } from "../pushes/queue.js";
import { issueOperatorToken } from "../oauth/issue-operator-token.js";
import { findIssuedGrant } from "../repositories/api-user-tokens.js";
import { findApplicationById } from "../repositories/application-admin.js";
import { revokeGrant } from "../repositories/grants.js";
import { findUserByUid, type User } from "../repositories/users.js";
import { AccountError } from "./manage-users.js";

/** The API user with this uid, or `null` (also for a person's uid). */
export async function findApiUser(ctx: SignonContext, uid: string): Promise<User | null> {
  const user = await findUserByUid(ctx.db, uid);
  return user?.isApiUser ? user : null;
}

/**
 * Issues a token for an API user on an application (S17): grants `signin`
 * and the given permissions (pushed like any grant) and issues a token
 * living `expiresInDays`, in one transaction, so a refused token leaves no
 * grant behind. The token exists only in the return value; the database
 * keeps its digest. Refuses (AccountError) a retired application or a
 * permission it does not support. `origin` is recorded in the audit events.
 */
export async function issueApiUserToken(
  ctx: SignonContext,
  request: { user: User; applicationId: string; permissions: readonly string[]; expiresInDays: number },
  actorUid: string,
  origin: RequestOrigin | null = null,
): Promise<{ accessToken: string; expiresAt: Date; application: string; permissions: string[] }> {
  if (!request.user.isApiUser) throw new AccountError(`${request.user.email} is not an API user`);
  const application = await findApplicationById(ctx.db, request.applicationId);
  if (!application || application.retired) throw new AccountError("Choose an application that is not retired");
  const { held, issued } = await ctx.db.transaction(async (tx) => {
    // The delivery worker is woken after the commit, not by the grant inside it.
    const inTx: SignonContext = { ...ctx, db: tx, pushesQueued: undefined };
    const held = await grantPermissions(
      inTx,
      { email: request.user.email, application: application.name, permissions: [...new Set(["signin", ...request.permissions])] },
      actorUid,
      origin,
    );
    const issued = await issueOperatorToken(
      inTx,
      { email: request.user.email, application: application.name, expiresInSeconds: request.expiresInDays * 24 * 3600 },
      actorUid,
      origin,
    );
    return { held, issued };
  });
  pushesCommitted(ctx);
  return { accessToken: issued.accessToken, expiresAt: issued.expiresAt, application: application.name, permissions: held };
}

/**
 * Revokes a token issued to an API user, by its grant id (the token itself is
 * never shown again): the grant and every token under it stop working at
 * once. Returns `false` when the user has no such token; revoking a revoked
 * one changes nothing.
 */
export async function revokeApiUserToken(
  ctx: SignonContext,
  user: User,
  grantId: string,
  actor: { uid: string; origin: RequestOrigin },
): Promise<boolean> {
  const grant = await findIssuedGrant(ctx.db, user.uid, grantId);
  if (!grant) return false;
  if (grant.revokedAt !== null) return true;
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
    await revokeGrant(tx, grant.id, now);
    await audit(tx, {
      action: "api_token_revoked",
      at: now,
      actorUid: actor.uid,
      subjectUid: user.uid,
      applicationId: grant.applicationId,
      origin: actor.origin,
      details: { grant_id: grant.id },
    });
  });
  return true;
}
