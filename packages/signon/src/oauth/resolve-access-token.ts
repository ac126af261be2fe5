import type { SignonContext } from "../context.js";
import { findLiveAccessTokenForResource, type LiveAccessToken } from "../repositories/resource-tokens.js";
import { sha256Hex } from "../security/random.js";

/**
 * Resolves an access token for a resource request: it must be unexpired,
 * unrevoked, belong to an active application and a user who is not
 * suspended and still holds `signin` there (S11). Otherwise `null`.
 */
export async function resolveAccessToken(ctx: SignonContext, token: string): Promise<LiveAccessToken | null> {
  if (!/^[0-9a-f]{64}$/.test(token)) return null;
  const found = await findLiveAccessTokenForResource(ctx.statements, sha256Hex(token), ctx.now());
  if (!found || found.user.suspendedAt !== null || found.application.retired || !found.permissions.includes("signin")) return null;
  return found;
}
