import type { RequestOrigin, SignonContext } from "../context.js";
import { findIdentityProvider, markUpstreamMessageSeen } from "../repositories/identity-providers.js";
import { samlFor } from "./saml-sign-in.js";
import { endUpstreamSessions, refuseUpstreamLogout } from "./upstream-logout.js";

/** How long a logout request's id is remembered against its replay. */
const rememberSeconds = 60 * 60;

export type SamlLogoutMessage =
  | { binding: "redirect"; query: Record<string, string>; originalQuery: string }
  | { binding: "post"; body: { SAMLRequest: string; RelayState?: string | undefined } };

export type SamlLogoutResult = { ok: true; redirectTo: string } | { ok: false; detail: string };

/**
 * SAML single logout from the provider: a `LogoutRequest` signed by one of its certificates (a query signature with the
 * HTTP-Redirect binding, which is required here although the standard lets an IdP leave it out; an XML signature with
 * HTTP-POST), from its entity, not seen before. The Sign-on sessions of its NameID (and SessionIndex) end, the
 * applications hear it as after a sign-out, and the browser goes back to the provider with a `LogoutResponse`.
 */
export async function acceptSamlLogout(ctx: SignonContext, providerId: string, message: SamlLogoutMessage, origin: RequestOrigin): Promise<SamlLogoutResult> {
  const provider = await findIdentityProvider(ctx.db, providerId);
  if (provider === null || provider.protocol !== "saml") return { ok: false, detail: "no such provider" };
  const saml = samlFor(ctx, provider, null);
  let result: Awaited<ReturnType<typeof saml.validateRedirectAsync>>;
  try {
    if (message.binding === "redirect") {
      if (typeof message.query["SAMLRequest"] !== "string") return refuseUpstreamLogout(ctx, provider, "no SAMLRequest", origin);
      if (typeof message.query["Signature"] !== "string") return refuseUpstreamLogout(ctx, provider, "the logout request is not signed", origin);
      result = await saml.validateRedirectAsync(message.query, message.originalQuery);
    } else {
      result = await saml.validatePostRequestAsync({ SAMLRequest: message.body.SAMLRequest });
    }
  } catch (error) {
    return refuseUpstreamLogout(ctx, provider, `the logout request was refused: ${error instanceof Error ? error.message.slice(0, 300) : "unreadable"}`, origin);
  }
  const profile = result.profile;
  if (profile === null || typeof profile.nameID !== "string" || typeof profile.ID !== "string") return refuseUpstreamLogout(ctx, provider, "the logout request names nobody", origin);
  if (!(await markUpstreamMessageSeen(ctx.db, provider.id, `saml-logout:${profile.ID}`.slice(0, 255), new Date(ctx.now().getTime() + rememberSeconds * 1000)))) {
    return refuseUpstreamLogout(ctx, provider, "the logout request was used before (replayed ID)", origin);
  }
  await endUpstreamSessions(ctx, provider, { subject: profile.nameID, sessionId: profile.sessionIndex ?? null, by: "saml" }, origin);
  const relayState = message.binding === "redirect" ? (message.query["RelayState"] ?? "") : (message.body.RelayState ?? "");
  return { ok: true, redirectTo: await saml.getLogoutResponseUrlAsync(profile, relayState, {}, true) };
}
