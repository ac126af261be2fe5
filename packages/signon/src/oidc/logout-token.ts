import { randomUUID } from "node:crypto";
import type { SignonContext } from "../context.js";
import type { PushRequest } from "../pushes/push-request.js";
import { applicationAlgorithm } from "./id-token.js";
import { signJwt } from "./signed-jwt.js";
import { liveSigningKey } from "./signing-keys.js";

/** The event that makes a JWT a logout token. */
export const backchannelLogoutEvent = "http://schemas.openid.net/event/backchannel-logout";

/** Logout tokens are valid for two minutes. */
export const logoutTokenLifetimeSeconds = 120;

/**
 * Signs a logout token for the user at one application: `iss`, `aud` (its
 * client id), `iat`, `exp`, `jti`, `sub` (the user's uid) and the
 * back-channel logout event, no `nonce`, with type `logout+jwt`.
 *
 * @see https://openid.net/specs/openid-connect-backchannel-1_0.html#LogoutToken
 */
export async function signLogoutToken(ctx: SignonContext, logout: { userUid: string; clientId: string; alg: string }): Promise<string> {
  const key = await liveSigningKey(ctx, applicationAlgorithm(logout.alg));
  const iat = Math.floor(ctx.now().getTime() / 1000);
  const claims = {
    iss: ctx.config.publicUrl,
    aud: logout.clientId,
    sub: logout.userUid,
    iat,
    exp: iat + logoutTokenLifetimeSeconds,
    jti: randomUUID(),
    events: { [backchannelLogoutEvent]: {} },
  };
  return signJwt("logout+jwt", claims, key);
}

/**
 * The back-channel logout request of a `logout` push: `POST` to the
 * application's `backchannel_logout_uri` with the form field `logout_token`.
 * The push outbox sends it like its other pushes.
 *
 * @see https://openid.net/specs/openid-connect-backchannel-1_0.html#BCRequest
 */
export function logoutRequestBuilder(ctx: SignonContext) {
  return async (push: { userUid: string; clientId: string; alg: string; backchannelLogoutUri: string }): Promise<PushRequest> => {
    const token = await signLogoutToken(ctx, push);
    return {
      url: push.backchannelLogoutUri,
      init: {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: new URLSearchParams({ logout_token: token }).toString(),
      },
    };
  };
}
