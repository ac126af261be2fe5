import type { RequestOrigin, SignonContext } from "../context.js";
import { normaliseEmail } from "../accounts/sign-in-limits.js";
import { providerOfAddress, type IdentityProvider } from "../repositories/identity-providers.js";
import { recordFailure, secondsUntilAllowed, upstreamSignInPerIpLimit } from "../security/failure-limit.js";
import { beginOpenIdSignIn } from "./openid-sign-in.js";
import { beginSamlSignIn } from "./saml-sign-in.js";

/**
 * The provider a typed address signs in through, or `null` for a Sign-on password: an address at a connected
 * organisation's domain goes to its provider, unless the organisation lets that address keep a password
 * (a break-glass account). Decided by the address alone, so it tells nobody whether an account has it.
 */
export async function providerForAddress(ctx: SignonContext, email: string): Promise<IdentityProvider | null> {
  return providerOfAddress(ctx.db, normaliseEmail(email));
}

export type UpstreamStart = { ok: true; redirectTo: string; state: string } | { ok: false; reason: "rate_limited"; retryAfterSeconds: number };

/**
 * Starts a sign-in at `provider` for the address typed: at most 60 from one source address in 10 minutes (each waits
 * in the database until it comes back or expires).
 *
 * @throws UpstreamUnavailableError when the provider cannot be reached in time.
 */
export async function startUpstreamSignIn(
  ctx: SignonContext,
  provider: IdentityProvider,
  request: { email: string; returnTo: string; forceAuthentication?: boolean },
  origin: RequestOrigin,
): Promise<UpstreamStart> {
  const now = ctx.now();
  const keys = origin.ip ? [origin.ip] : [];
  const wait = await secondsUntilAllowed(ctx.db, upstreamSignInPerIpLimit, keys, now);
  if (wait !== null) return { ok: false, reason: "rate_limited", retryAfterSeconds: wait };
  await recordFailure(ctx.db, upstreamSignInPerIpLimit, keys, now);
  const email = normaliseEmail(request.email);
  const started =
    provider.protocol === "saml"
      ? await beginSamlSignIn(ctx, provider, { returnTo: request.returnTo, email, forceAuthentication: request.forceAuthentication ?? false })
      : await beginOpenIdSignIn(ctx, provider, { returnTo: request.returnTo, email, forceAuthentication: request.forceAuthentication ?? false });
  return { ok: true, ...started };
}
