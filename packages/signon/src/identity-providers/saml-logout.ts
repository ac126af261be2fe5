import { inflateRawSync } from "node:zlib";
import type { RequestOrigin, SignonContext } from "../context.js";
import { findIdentityProvider, markUpstreamMessageSeen } from "../repositories/identity-providers.js";
import { samlFor } from "./saml-sign-in.js";
import { endUpstreamSessions, refuseUpstreamLogout } from "./upstream-logout.js";

/** How long a logout request's id is remembered against its replay; one older than `freshSeconds` is refused anyway. */
const rememberSeconds = 60 * 60;
const freshSeconds = 5 * 60;
/** The most XML a logout request may inflate to: node-saml would inflate without a bound. */
const maxRequestBytes = 256 * 1024;

/** The request's XML, bounded; `null` when it is not base64 of (deflated, with HTTP-Redirect) XML within the bound. */
function requestXml(message: SamlLogoutMessage): string | null {
  try {
    const raw = Buffer.from(message.binding === "redirect" ? (message.query["SAMLRequest"] ?? "") : message.body.SAMLRequest, "base64");
    const xml = message.binding === "redirect" ? inflateRawSync(raw, { maxOutputLength: maxRequestBytes }) : raw;
    return xml.length > maxRequestBytes ? null : xml.toString("utf8");
  } catch {
    return null;
  }
}

/** Whether the request was issued within the last five minutes (a minute of clock difference allowed). */
function isFresh(xml: string, now: Date): boolean {
  const issued = /<(?:[\w-]+:)?LogoutRequest\b[^>]*\sIssueInstant="([^"]+)"/.exec(xml)?.[1];
  const at = issued === undefined ? Number.NaN : Date.parse(issued);
  return !Number.isNaN(at) && at <= now.getTime() + 60_000 && at >= now.getTime() - freshSeconds * 1000;
}

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
  const xml = requestXml(message);
  if (xml === null) return refuseUpstreamLogout(ctx, provider, "the logout request is not readable (or over 256 KB)", origin);
  if (!isFresh(xml, ctx.now())) return refuseUpstreamLogout(ctx, provider, "the logout request was not issued in the last five minutes", origin);
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
  try {
    return { ok: true, redirectTo: await saml.getLogoutResponseUrlAsync(profile, relayState, {}, true) };
  } catch {
    // The sessions have ended; without an answer for the provider, the browser stays here.
    return { ok: true, redirectTo: "/sign-in" };
  }
}
