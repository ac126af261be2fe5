import { eq } from "drizzle-orm";
import type { SignonContext } from "../context.js";
import { accessTokens, grants } from "../db/schema.js";
import { OAuthError } from "../oauth/errors.js";
import { resolveAccessToken } from "../oauth/resolve-access-token.js";
import { InvalidTokenError } from "../oauth/errors.js";
import { sha256Hex } from "../security/random.js";
import { scopeHolds } from "./id-token.js";

/**
 * The access token is valid but was not issued for an OpenID Connect request (no `openid` scope).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export class InsufficientScopeError extends OAuthError {
  readonly code = "insufficient_scope";
  readonly status = 403;
  constructor(description?: string) {
    super(description);
    this.headers["www-authenticate"] = 'Bearer realm="signon", error="insufficient_scope", scope="openid"';
  }
}

/** The UserInfo response: `sub`, the claims of the granted scopes, and the user's permissions on the token's application. */
export interface UserInfo {
  sub: string;
  name?: string;
  email?: string;
  email_verified?: boolean;
  permissions: string[];
}

/**
 * The claims about the user of an access token issued for an OpenID Connect
 * request: `name` for the scope `profile`, `email` and `email_verified` for
 * `email` (Sign-on's addresses are confirmed: by the invitation, or by the
 * link of an e-mail change), and `permissions` (on the token's application
 * only, as in `/user.json`).
 *
 * @see https://openid.net/specs/openid-connect-core-1_0.html#UserInfo
 */
export async function readUserInfo(ctx: SignonContext, token: string): Promise<UserInfo> {
  const resolved = await resolveAccessToken(ctx, token);
  if (!resolved) throw new InvalidTokenError("The access token is not valid");
  const [grant] = await ctx.db
    .select({ scope: grants.scope })
    .from(accessTokens)
    .innerJoin(grants, eq(grants.id, accessTokens.grantId))
    .where(eq(accessTokens.tokenHash, sha256Hex(token)))
    .limit(1);
  const scope = grant?.scope ?? null;
  if (scope === null || !scopeHolds(scope, "openid")) throw new InsufficientScopeError("The access token was not issued for an OpenID Connect request");
  const { user } = resolved;
  return {
    sub: user.uid,
    ...(scopeHolds(scope, "profile") ? { name: user.name } : {}),
    ...(scopeHolds(scope, "email") ? { email: user.email, email_verified: true } : {}),
    permissions: resolved.permissions,
  };
}
