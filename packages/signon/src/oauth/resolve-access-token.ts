import type { SignonContext } from "../context.js";
import { listPermissions } from "../repositories/permissions.js";
import { findLiveAccessToken, type AccessTokenRecord } from "../repositories/tokens.js";
import { sha256Hex } from "../security/random.js";

/** A live access token with the permissions its user holds on its application. */
export interface ResolvedAccessToken extends AccessTokenRecord {
  permissions: string[];
}

/**
 * Resolves an access token for a resource request: it must be unexpired,
 * unrevoked, belong to an active application and a user who is not
 * suspended and still holds `signin` there (S11). Otherwise `null`.
 */
export async function resolveAccessToken(ctx: SignonContext, token: string): Promise<ResolvedAccessToken | null> {
  if (!/^[0-9a-f]{64}$/.test(token)) return null;
  const record = await findLiveAccessToken(ctx.db, sha256Hex(token), ctx.now());
  if (!record || record.user.suspendedAt !== null || record.application.retired) return null;
  const permissions = await listPermissions(ctx.db, record.user.uid, record.application.id);
  if (!permissions.includes("signin")) return null;
  return { ...record, permissions };
}
