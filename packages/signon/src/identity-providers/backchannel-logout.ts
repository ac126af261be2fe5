import type { JWTPayload } from "jose";
import type { RequestOrigin, SignonContext } from "../context.js";
import { findIdentityProvider, markUpstreamMessageSeen } from "../repositories/identity-providers.js";
import { describeUpstreamError, providerConfiguration, verifyProviderJwt } from "./openid-upstream.js";
import { endUpstreamSessions, refuseUpstreamLogout, type UpstreamLogoutResult } from "./upstream-logout.js";

const logoutEvent = "http://schemas.openid.net/event/backchannel-logout";
/** How long a logout token without `exp` is remembered against replay, and how old one may be. */
const logoutTokenSeconds = 5 * 60;

export type BackchannelLogoutResult = UpstreamLogoutResult;

/**
 * OpenID Connect Back-Channel Logout 1.0: the provider posts a logout token when a person signs out there (or is
 * disabled). It must be signed by the provider's keys (never `alg: none`), for Sign-on's client (`aud`), from its
 * issuer, recent, with the back-channel logout event, a `sub` or `sid`, no `nonce`, and a `jti` not seen before.
 * Then every Sign-on session it names ends (all the person's sessions through the provider for a `sub`, the one
 * provider session for a `sid`), and the applications hear it as after a sign-out (a reauth push).
 *
 * @see https://openid.net/specs/openid-connect-backchannel-1_0.html#Validation
 */
export async function acceptBackchannelLogout(ctx: SignonContext, providerId: string, logoutToken: string, origin: RequestOrigin): Promise<BackchannelLogoutResult> {
  const provider = await findIdentityProvider(ctx.db, providerId);
  if (provider === null || provider.protocol !== "oidc" || provider.issuer === null || provider.clientId === null) return { ok: false, detail: "no such provider" };
  let payload: JWTPayload;
  try {
    const configuration = await providerConfiguration(ctx, provider);
    payload = await verifyProviderJwt(ctx, provider, configuration, logoutToken, "posted", { maxTokenAge: `${logoutTokenSeconds}s` });
  } catch (error) {
    return refuse(ctx, provider, `the logout token was refused: ${describeUpstreamError(error)}`, origin);
  }
  const events = payload["events"];
  if (typeof events !== "object" || events === null || typeof (events as Record<string, unknown>)[logoutEvent] !== "object") {
    return refuse(ctx, provider, "the logout token has no back-channel logout event", origin);
  }
  if (payload["nonce"] !== undefined) return refuse(ctx, provider, "a logout token must not carry a nonce", origin);
  const subject = typeof payload.sub === "string" && payload.sub !== "" ? payload.sub : null;
  const sessionId = typeof payload["sid"] === "string" && payload["sid"] !== "" ? payload["sid"] : null;
  if (subject === null && sessionId === null) return refuse(ctx, provider, "the logout token names neither sub nor sid", origin);
  if (typeof payload.jti !== "string" || payload.jti === "" || payload.jti.length > 255) return refuse(ctx, provider, "the logout token has no jti", origin);
  const now = ctx.now();
  const rememberUntil = new Date(Math.max(now.getTime() + logoutTokenSeconds * 1000, (payload.exp ?? 0) * 1000));
  if (!(await markUpstreamMessageSeen(ctx.db, provider.id, payload.jti, rememberUntil))) return refuse(ctx, provider, "the logout token was used before (replayed jti)", origin);

  return endUpstreamSessions(ctx, provider, { subject, sessionId, by: sessionId === null ? "sub" : "sid" }, origin);
}

const refuse = refuseUpstreamLogout;
