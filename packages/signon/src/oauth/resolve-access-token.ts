import type { SignonContext } from "../context.js";
import { findLiveAccessTokenForResource, type LiveAccessToken } from "../repositories/resource-tokens.js";
import { sha256Hex } from "../security/random.js";

/**
 * Resolves an access token for a resource request: it must be unexpired,
 * unrevoked, belong to an active application and a user who is not
 * suspended and still holds `signin` there (S11). Otherwise `null`. A token
 * used again is answered from the answers kept in memory while nothing has
 * changed (see `TokenAnswerCache`).
 */
/**
 * What an access token looks like: Sign-on's own (64 hex digits), or one
 * imported from GOV.UK Signon, which Doorkeeper made (43 characters of
 * URL-safe base64). Anything else is not looked up.
 */
const accessTokenShape = /^(?:[0-9a-f]{64}|[A-Za-z0-9_-]{43})$/;

export async function resolveAccessToken(ctx: SignonContext, token: string): Promise<LiveAccessToken | null> {
  if (!accessTokenShape.test(token)) return null;
  const tokenHash = sha256Hex(token);
  const now = ctx.now();
  const found = ctx.tokenAnswers?.find(tokenHash, now) ?? (await readAnswer(ctx, tokenHash, now));
  if (!found || found.user.suspendedAt !== null || found.application.retired || !found.permissions.includes("signin")) return null;
  return found;
}

async function readAnswer(ctx: SignonContext, tokenHash: string, now: Date): Promise<LiveAccessToken | null> {
  const cache = ctx.tokenAnswers;
  const generation = cache?.generation ?? 0;
  const found = await findLiveAccessTokenForResource(ctx.statements, tokenHash, now);
  if (found) cache?.keep(tokenHash, found, generation);
  return found;
}
