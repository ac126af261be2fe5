import * as client from "openid-client";
import type { SignonContext } from "../context.js";
import { findIdentityProvider, insertUpstreamSignIn, takeUpstreamSignIn, type IdentityProvider } from "../repositories/identity-providers.js";
import { constantTimeEqual } from "../security/constant-time.js";
import { sha256Hex } from "../security/random.js";
import { describeUpstreamError, providerConfiguration, UpstreamUnavailableError, verifyProviderJwt } from "./openid-upstream.js";
import type { UpstreamPerson } from "./upstream-person.js";

/** How long a person has at their provider before the sign-in it was sent for expires. */
export const upstreamSignInSeconds = 10 * 60;

/** Where every provider sends people back: one address for all, the sign-in found by its `state`. */
export function openIdCallbackUrl(ctx: SignonContext): string {
  return new URL("/sign-in/upstream/callback", ctx.config.publicUrl).href;
}

/**
 * Sends a person to their organisation's OpenID Connect provider: an authorization code request with PKCE (S256), a
 * fresh `state` and `nonce`, and the address they typed as `login_hint`. The sign-in waits in the database under the
 * digest of its `state`; the browser keeps the `state` in a cookie, so an answer brought by another browser is refused.
 *
 * @throws UpstreamUnavailableError when the provider's discovery document cannot be had in time.
 */
export async function beginOpenIdSignIn(
  ctx: SignonContext,
  provider: IdentityProvider,
  request: { returnTo: string; email: string; forceAuthentication?: boolean },
): Promise<{ redirectTo: string; state: string }> {
  const configuration = await providerConfiguration(ctx, provider);
  const state = client.randomState();
  const nonce = client.randomNonce();
  const codeVerifier = client.randomPKCECodeVerifier();
  const now = ctx.now();
  await insertUpstreamSignIn(ctx.db, {
    stateHash: sha256Hex(state),
    providerId: provider.id,
    nonce,
    codeVerifier,
    email: request.email,
    returnTo: request.returnTo,
    expiresAt: new Date(now.getTime() + upstreamSignInSeconds * 1000),
  });
  const parameters: Record<string, string> = {
    redirect_uri: openIdCallbackUrl(ctx),
    scope: provider.scopes,
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
  };
  parameters["login_hint"] = request.email;
  // An application asked for a new sign-in (prompt=login): the provider is asked for one too, not its session.
  if (request.forceAuthentication === true) parameters["prompt"] = "login";
  return { redirectTo: client.buildAuthorizationUrl(configuration, parameters).href, state };
}

/** Why an answer from a provider was not accepted, for the event (`detail`) and the page (`reason`). */
export type OpenIdAnswerRefusal =
  | { reason: "no_sign_in"; detail: string; provider: null; email?: undefined }
  | { reason: "provider_refused" | "invalid_answer" | "provider_unavailable"; detail: string; provider: IdentityProvider; email: string };

export type OpenIdAnswer = { ok: true; provider: IdentityProvider; person: UpstreamPerson; returnTo: string } | ({ ok: false } & OpenIdAnswerRefusal);

function claimString(claims: Record<string, unknown>, name: string): string | null {
  const value = claims[name];
  return typeof value === "string" && value !== "" ? value : null;
}

/**
 * Checks a provider's answer at the callback: the `state` is the browser's and names a sign-in still waiting (taken
 * once: a replay finds nothing); then openid-client exchanges the code (with the PKCE verifier) and checks the ID
 * token's `iss`, `aud`, `exp`, `iat` and `nonce`, and jose its signature with the provider's published keys (an
 * unknown key id fetches them again once; `none` and shared-secret algorithms are refused). The person comes from its claims, or the userinfo endpoint for an e-mail address it left out.
 */
export async function finishOpenIdSignIn(ctx: SignonContext, browserState: string | undefined, currentUrl: URL): Promise<OpenIdAnswer> {
  const state = currentUrl.searchParams.get("state");
  if (state === null || state === "" || browserState === undefined || !constantTimeEqual(state, browserState)) {
    return { ok: false, reason: "no_sign_in", detail: browserState === undefined ? "no sign-in cookie in this browser" : "the state is not this browser's", provider: null };
  }
  const waiting = await takeUpstreamSignIn(ctx.db, sha256Hex(state), ctx.now());
  if (waiting === null) return { ok: false, reason: "no_sign_in", detail: "no sign-in waits for this state (used already, or expired)", provider: null };
  const provider = await findIdentityProvider(ctx.db, waiting.providerId);
  if (provider === null) return { ok: false, reason: "no_sign_in", detail: "the provider was disconnected", provider: null };
  const typed = waiting.email;
  let configuration: client.Configuration;
  try {
    configuration = await providerConfiguration(ctx, provider);
  } catch (error) {
    return { ok: false, reason: "provider_unavailable", detail: describeUpstreamError(error), provider, email: typed };
  }
  try {
    const tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
      expectedState: state,
      expectedNonce: waiting.nonce,
      idTokenExpected: true,
      ...(waiting.codeVerifier === null ? {} : { pkceCodeVerifier: waiting.codeVerifier }),
    });
    const claims = tokens.claims() as Record<string, unknown> | undefined;
    if (claims === undefined || tokens.id_token === undefined) return { ok: false, reason: "invalid_answer", detail: "no ID token", provider, email: typed };
    // openid-client checked the claims; the signature is checked too, against the provider's published keys.
    // Just issued: at most 10 minutes old, and not from the future (30 s of clock difference allowed).
    await verifyProviderJwt(ctx, provider, configuration, tokens.id_token, "token_endpoint", { maxTokenAge: "10m" });
    let email = claimString(claims, "email");
    let emailVerified = claims["email_verified"] === true || claims["xms_edov"] === true;
    let name = claimString(claims, "name");
    const subject = claimString(claims, "sub")!;
    if (email === null && configuration.serverMetadata().userinfo_endpoint !== undefined) {
      const info = (await client.fetchUserInfo(configuration, tokens.access_token, subject)) as Record<string, unknown>;
      email = claimString(info, "email");
      emailVerified = info["email_verified"] === true || info["xms_edov"] === true;
      name ??= claimString(info, "name");
    }
    // Google: one issuer for every Google account. Only its hosted domain (`hd`) says the account is the organisation's
    // own, not a personal one that verified a work address.
    if (provider.issuer === "https://accounts.google.com" && !provider.domains.includes(String(claims["hd"] ?? "").toLowerCase())) emailVerified = false;
    const amr = Array.isArray(claims["amr"]) ? claims["amr"].filter((value): value is string => typeof value === "string") : [];
    return {
      ok: true,
      provider,
      returnTo: waiting.returnTo,
      person: { subject, email, emailVerified, name, amr, acr: claimString(claims, "acr"), sessionId: claimString(claims, "sid") },
    };
  } catch (error) {
    if (error instanceof client.AuthorizationResponseError) return { ok: false, reason: "provider_refused", detail: describeUpstreamError(error), provider, email: typed };
    if (error instanceof UpstreamUnavailableError || isTimeout(error)) return { ok: false, reason: "provider_unavailable", detail: describeUpstreamError(error), provider, email: typed };
    return { ok: false, reason: "invalid_answer", detail: describeUpstreamError(error), provider, email: typed };
  }
}

function isTimeout(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let current = error; current instanceof Error && !seen.has(current); current = current.cause) {
    seen.add(current);
    if (current.name === "TimeoutError" || current.name === "AbortError" || (current as { code?: unknown }).code === "ECONNREFUSED") return true;
    if (current.message === "fetch failed") return true;
  }
  return false;
}
