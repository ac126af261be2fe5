import type { SignonContext } from "../context.js";
import type { Application } from "../repositories/applications.js";
import { resolveAccessToken } from "./resolve-access-token.js";

/** RFC 7662 §2.2 introspection response. */
export type IntrospectionResponse =
  | { active: false }
  | { active: true; token_type: "Bearer"; client_id: string; sub: string; username: string; exp: number; iat: number };

/**
 * Introspects an access token for the client it was issued to. A token of
 * another application, or one that `/user.json` would refuse, is inactive.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7662#section-2
 */
export async function introspectToken(ctx: SignonContext, application: Application, token: string): Promise<IntrospectionResponse> {
  const resolved = await resolveAccessToken(ctx, token);
  if (!resolved || resolved.application.id !== application.id) return { active: false };
  return {
    active: true,
    token_type: "Bearer",
    client_id: application.clientId,
    sub: resolved.user.uid,
    username: resolved.user.email,
    exp: Math.floor(resolved.expiresAt.getTime() / 1000),
    iat: Math.floor(resolved.createdAt.getTime() / 1000),
  };
}
