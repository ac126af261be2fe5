import { generateServiceProviderMetadata, SAML, SamlStatusError, ValidateInResponseTo, type Profile } from "@node-saml/node-saml";
import { readFileSync } from "node:fs";
import type { SignonContext } from "../context.js";
import { findIdentityProvider, insertUpstreamSignIn, markUpstreamMessageSeen, takeUpstreamSignIn, type IdentityProvider } from "../repositories/identity-providers.js";
import { constantTimeEqual } from "../security/constant-time.js";
import { randomHex, sha256Hex } from "../security/random.js";
import { upstreamSignInSeconds } from "./openid-sign-in.js";
import { UpstreamUnavailableError } from "./openid-upstream.js";
import type { UpstreamPerson } from "./upstream-person.js";

const persistentNameId = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";
const transientNameId = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient";
/** How long a checked answer waits for the browser to come back with its cookie. */
const answerWaitSeconds = 120;

/** Sign-on as a SAML service provider: one for every organisation, each IdP trusting it by these addresses. */
export function samlServiceProvider(ctx: SignonContext): { entityId: string; assertionConsumerService: string } {
  return {
    entityId: new URL("/sign-in/upstream/saml/metadata", ctx.config.publicUrl).href,
    assertionConsumerService: new URL("/sign-in/upstream/saml/acs", ctx.config.publicUrl).href,
  };
}

const signingFiles = new Map<string, string>();

/** Sign-on's SAML signing key and certificate (`SIGNON_SAML_SIGNING_KEY`, `SIGNON_SAML_SIGNING_CERT`), read once; `null` when none is set. */
export function samlSigning(ctx: SignonContext): { key: string; certificate: string } | null {
  const files = ctx.config.samlSigning;
  if (files === null) return null;
  const read = (path: string) => {
    let text = signingFiles.get(path);
    if (text === undefined) {
      text = readFileSync(path, "utf8");
      signingFiles.set(path, text);
    }
    return text;
  };
  return { key: read(files.keyFile), certificate: read(files.certFile) };
}

/**
 * Sign-on's service provider metadata: its entity id, its assertion consumer service (HTTP-POST), the NameID it asks
 * for, and the certificate it signs its requests with when it has one.
 */
export function serviceProviderMetadata(ctx: SignonContext): string {
  const sp = samlServiceProvider(ctx);
  const signing = samlSigning(ctx);
  return generateServiceProviderMetadata({
    issuer: sp.entityId,
    callbackUrl: sp.assertionConsumerService,
    identifierFormat: persistentNameId,
    wantAssertionsSigned: true,
    ...(signing === null ? {} : { privateKey: signing.key, publicCerts: signing.certificate }),
  });
}

export function samlLogoutUrl(ctx: SignonContext, provider: IdentityProvider): string {
  return new URL(`/sign-in/upstream/${provider.id}/saml/logout`, ctx.config.publicUrl).href;
}

/**
 * node-saml set up for one provider: its certificates, its entity id as the only issuer accepted, Sign-on's entity id as
 * the only audience, a signed assertion required, and every response an answer to `requestId` (the request Sign-on
 * sent; none for a logout message).
 */
export function samlFor(ctx: SignonContext, provider: IdentityProvider, requestId: string | null, forceAuthn = false): SAML {
  const sp = samlServiceProvider(ctx);
  const signing = samlSigning(ctx);
  return new SAML({
    // With Sign-on's signing key, its requests are signed (the query, with the HTTP-Redirect binding).
    ...(signing === null ? {} : { privateKey: signing.key, signatureAlgorithm: "sha256" as const }),
    callbackUrl: sp.assertionConsumerService,
    ...(provider.samlSignOnUrl === null ? {} : { entryPoint: provider.samlSignOnUrl }),
    issuer: sp.entityId,
    audience: sp.entityId,
    ...(provider.samlEntityId === null ? {} : { idpIssuer: provider.samlEntityId }),
    idpCert: provider.samlCertificates ?? [],
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    identifierFormat: persistentNameId,
    disableRequestedAuthnContext: true,
    forceAuthn,
    acceptedClockSkewMs: 30_000,
    validateInResponseTo: requestId === null ? ValidateInResponseTo.never : ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: upstreamSignInSeconds * 1000,
    generateUniqueId: () => requestId ?? `_${randomHex(20)}`,
    // The request's id is kept with the sign-in in the database: this answers for that one id alone.
    cacheProvider: {
      saveAsync: () => Promise.resolve(null),
      getAsync: (key) => Promise.resolve(requestId !== null && key === requestId ? new Date().toISOString() : null),
      removeAsync: (key) => Promise.resolve(key),
    },
    logoutUrl: provider.samlLogoutUrl ?? provider.samlSignOnUrl ?? "",
    logoutCallbackUrl: samlLogoutUrl(ctx, provider),
  });
}

/**
 * Sends a person to their organisation's SAML identity provider: an `AuthnRequest` (HTTP-Redirect binding, a persistent
 * NameID asked for) whose id is kept with the sign-in, and a fresh `RelayState` that the browser's cookie holds too.
 */
export async function beginSamlSignIn(
  ctx: SignonContext,
  provider: IdentityProvider,
  request: { returnTo: string; email: string; forceAuthentication?: boolean },
): Promise<{ redirectTo: string; state: string }> {
  const requestId = `_${randomHex(20)}`;
  const state = randomHex(32);
  await insertUpstreamSignIn(ctx.db, {
    stateHash: sha256Hex(state),
    providerId: provider.id,
    nonce: requestId,
    codeVerifier: null,
    email: request.email,
    returnTo: request.returnTo,
    expiresAt: new Date(ctx.now().getTime() + upstreamSignInSeconds * 1000),
  });
  let redirectTo: string;
  try {
    redirectTo = await samlFor(ctx, provider, requestId, request.forceAuthentication === true).getAuthorizeUrlAsync(state, undefined, {});
  } catch (error) {
    throw new UpstreamUnavailableError(`the request to the identity provider could not be made: ${error instanceof Error ? error.message.slice(0, 300) : "unknown"}`);
  }
  return { redirectTo, state };
}

function firstText(value: unknown): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first === "string" && first !== "") return first;
  if (typeof first === "object" && first !== null && typeof (first as { _?: unknown })._ === "string") return (first as { _: string })._;
  return null;
}

/** The first attribute of `names` the assertion carries (IdPs name e-mail and display name differently). */
function attribute(profile: Profile, names: readonly string[]): string | null {
  for (const name of names) {
    const value = firstText(profile[name]);
    if (value !== null) return value;
  }
  return null;
}

const emailAttributes = ["email", "mail", "emailaddress", "urn:oid:0.9.2342.19200300.100.1.3", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"];
const nameAttributes = ["displayName", "name", "urn:oid:2.16.840.1.113730.3.1.241", "http://schemas.microsoft.com/identity/claims/displayname", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name"];

/** Authentication context classes, as RFC 8176 methods: a password, or more than one factor. */
const contextMethods: Record<string, string[]> = {
  "urn:oasis:names:tc:SAML:2.0:ac:classes:Password": ["pwd"],
  "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport": ["pwd"],
  "urn:oasis:names:tc:SAML:2.0:ac:classes:X509": ["hwk"],
  "urn:oasis:names:tc:SAML:2.0:ac:classes:Smartcard": ["sc"],
  "urn:oasis:names:tc:SAML:2.0:ac:classes:SmartcardPKI": ["sc"],
  "urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken": ["otp"],
  "urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract": ["mfa"],
  "http://schemas.microsoft.com/claims/multipleauthn": ["mfa"],
  "https://refeds.org/profile/mfa": ["mfa"],
};

type AssertionXml = {
  Assertion?: {
    $?: { ID?: string };
    Subject?: { SubjectConfirmation?: { SubjectConfirmationData?: { $?: { InResponseTo?: string; NotOnOrAfter?: string } }[] }[] }[];
    AuthnStatement?: { AuthnContext?: { AuthnContextClassRef?: unknown }[] }[];
  };
};

/** What the signed assertion itself says: its id, and what its bearer confirmation answers and until when. */
function signedAssertion(profile: Profile): { id: string | null; inResponseTo: string | null; notOnOrAfter: Date | null } {
  const assertion = (profile.getAssertion?.() as AssertionXml | undefined)?.Assertion;
  const confirmation = assertion?.Subject?.[0]?.SubjectConfirmation?.[0]?.SubjectConfirmationData?.[0]?.$;
  const until = confirmation?.NotOnOrAfter === undefined ? null : new Date(confirmation.NotOnOrAfter);
  return { id: assertion?.$?.ID ?? null, inResponseTo: confirmation?.InResponseTo ?? null, notOnOrAfter: until === null || Number.isNaN(until.getTime()) ? null : until };
}

/** The `AuthnContextClassRef` of the assertion's authentication statement, if it has one. */
function authenticationContext(profile: Profile): string | null {
  const assertion = profile.getAssertion?.() as AssertionXml | undefined;
  return firstText(assertion?.Assertion?.AuthnStatement?.[0]?.AuthnContext?.[0]?.AuthnContextClassRef);
}

/** The person a checked assertion vouches for. An organisation's own directory is where its addresses come from: its e-mail attribute counts as verified. */
export function personOf(profile: Profile): UpstreamPerson {
  const context = authenticationContext(profile);
  return {
    subject: profile.nameID,
    email: attribute(profile, emailAttributes) ?? (profile.nameIDFormat === "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" ? profile.nameID : null),
    emailVerified: true,
    name: attribute(profile, nameAttributes),
    amr: context === null ? [] : (contextMethods[context] ?? []),
    acr: context,
    sessionId: profile.sessionIndex ?? null,
  };
}

export type SamlAnswer =
  | { ok: true; state: string }
  | { ok: false; reason: "no_sign_in"; detail: string; provider: null; email?: undefined }
  | { ok: false; reason: "provider_refused" | "invalid_answer"; detail: string; provider: IdentityProvider; email: string };

/**
 * Checks a provider's answer at the assertion consumer service (a post from the provider's site): the `RelayState`
 * names a sign-in still waiting (taken once: a replay finds nothing); node-saml checks the response is an answer to
 * that sign-in's request, from the provider's entity, for Sign-on as audience, within its time conditions, with an
 * assertion signed by one of the provider's certificates (a signature over other XML, or an assertion moved beside
 * the signed one, is refused). The person then waits, for two minutes, for the browser to come back to
 * `finishSamlSignIn` with the cookie that holds the same state.
 */
export async function acceptSamlAnswer(ctx: SignonContext, body: { SAMLResponse: string; RelayState?: string | undefined }): Promise<SamlAnswer> {
  const state = body.RelayState ?? "";
  const waiting = state === "" ? null : await takeUpstreamSignIn(ctx.db, sha256Hex(state), ctx.now());
  if (waiting === null || waiting.answer !== null) return { ok: false, reason: "no_sign_in", detail: "no sign-in waits for this RelayState (used already, or expired)", provider: null };
  const provider = await findIdentityProvider(ctx.db, waiting.providerId);
  if (provider === null || provider.protocol !== "saml") return { ok: false, reason: "no_sign_in", detail: "the provider was disconnected", provider: null };
  let profile: Profile | null;
  try {
    ({ profile } = await samlFor(ctx, provider, waiting.nonce).validatePostResponseAsync({ SAMLResponse: body.SAMLResponse }));
  } catch (error) {
    const detail = error instanceof Error ? error.message.slice(0, 500) : String(error).slice(0, 500);
    return { ok: false, reason: error instanceof SamlStatusError ? "provider_refused" : "invalid_answer", detail, provider, email: waiting.email };
  }
  const refused = (detail: string): SamlAnswer => ({ ok: false, reason: "invalid_answer", detail, provider, email: waiting.email });
  if (profile === null || typeof profile.nameID !== "string" || profile.nameID === "") return refused("the assertion names nobody (no NameID)");
  // node-saml checks the issuer of logout messages only: an assertion's must be the provider's entity too.
  if (profile.issuer !== provider.samlEntityId) return refused(`the assertion's issuer is ${String(profile.issuer).slice(0, 200)}, not the provider's entity id`);
  // A transient NameID changes at each sign-in: it cannot say who the person is next time.
  if (profile.nameIDFormat === transientNameId) return refused("the NameID is transient: ask the provider for a persistent one");
  const assertion = signedAssertion(profile);
  // The signed assertion itself must answer Sign-on's request (the Response's InResponseTo is not covered by its signature).
  if (assertion.inResponseTo !== waiting.nonce) return refused("the signed assertion does not answer Sign-on's request (SubjectConfirmationData InResponseTo)");
  // A bearer assertion is used once.
  const rememberUntil = new Date(Math.max(ctx.now().getTime() + 60 * 60 * 1000, assertion.notOnOrAfter?.getTime() ?? 0));
  if (assertion.id === null || !(await markUpstreamMessageSeen(ctx.db, provider.id, `saml-assertion:${assertion.id}`.slice(0, 255), rememberUntil))) {
    return refused("the assertion was used before");
  }
  await insertUpstreamSignIn(ctx.db, { ...waiting, answer: personOf(profile), expiresAt: new Date(ctx.now().getTime() + answerWaitSeconds * 1000) });
  return { ok: true, state };
}

/** The checked answer waiting for this browser: its cookie's state must be the one the answer came back with. */
export async function finishSamlSignIn(
  ctx: SignonContext,
  browserState: string | undefined,
  state: string,
): Promise<{ ok: true; provider: IdentityProvider; person: UpstreamPerson; returnTo: string } | { ok: false; detail: string }> {
  if (browserState === undefined || state === "" || !constantTimeEqual(state, browserState)) return { ok: false, detail: "the answer came back to another browser" };
  const waiting = await takeUpstreamSignIn(ctx.db, sha256Hex(state), ctx.now());
  if (waiting === null || waiting.answer === null) return { ok: false, detail: "no checked answer waits for this browser" };
  const provider = await findIdentityProvider(ctx.db, waiting.providerId);
  if (provider === null) return { ok: false, detail: "the provider was disconnected" };
  return { ok: true, provider, person: waiting.answer as UpstreamPerson, returnTo: waiting.returnTo };
}
