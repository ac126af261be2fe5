import { randomUUID } from "node:crypto";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { insertGrant } from "../repositories/grants.js";
import { randomHex, sha256Hex } from "../security/random.js";
import type { AuthorizationRequest } from "./authorization-request.js";

/** Authorization codes are valid for ten minutes (S6). */
export const codeLifetimeSeconds = 600;

/**
 * Issues a single-use authorization code for a signed-in user and returns
 * the URL to send the browser to: the redirect URI with `code`, `state` and
 * `iss` added.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2
 * @see https://www.rfc-editor.org/rfc/rfc9207
 */
export async function issueAuthorizationCode(
  ctx: SignonContext,
  request: AuthorizationRequest,
  userUid: string,
  origin: RequestOrigin,
  authentication?: { authTime: Date; amr: readonly string[] },
): Promise<string> {
  const { openid } = request;
  const code = randomHex();
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
    await insertGrant(tx, {
      id: randomUUID(),
      kind: "authorization_code",
      userUid,
      applicationId: request.application.id,
      codeHash: sha256Hex(code),
      redirectUri: request.redirectUriSent ? request.redirectUri : null,
      codeChallenge: request.codeChallenge,
      codeExpiresAt: new Date(now.getTime() + codeLifetimeSeconds * 1000),
      createdAt: now,
      ...(openid
        ? { scope: openid.scopes.join(" "), nonce: openid.nonce, authTime: authentication?.authTime ?? now, amr: [...(authentication?.amr ?? ["pwd"])] }
        : {}),
    });
    await audit(tx, { action: "authorization_code_issued", at: now, actorUid: userUid, subjectUid: userUid, applicationId: request.application.id, origin });
  });
  return redirectWithParameters(request.redirectUri, { code, state: request.state, iss: ctx.config.publicUrl });
}

/**
 * Adds query parameters to a redirect URI, keeping its own query byte for byte
 * (RFC 6749 §3.1.2), so that a client can take them out again and find the
 * URI it registered.
 */
export function redirectWithParameters(redirectUri: string, parameters: Record<string, string>): string {
  const base = new URL(redirectUri).href; // percent-encodes what a Location header may not carry
  const added = new URLSearchParams(parameters).toString();
  if (!base.includes("?")) return `${base}?${added}`;
  return base.endsWith("?") || base.endsWith("&") ? `${base}${added}` : `${base}&${added}`;
}
