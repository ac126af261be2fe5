// Sign-in through an organisation's own SAML 2.0 identity provider, against Sign-on as shipped and an IdP over real
// HTTP whose answers each test scripts (test/support/scripted-saml-provider.ts).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { auditEvents, sessions, upstreamIdentities } from "../../src/db/schema.js";
import { connectSamlProvider } from "../../src/identity-providers/connect.js";
import type { Organisation } from "../../src/repositories/organisations.js";
import { parseSignInForm } from "../support/browser.js";
import { createUser } from "../support/factories.js";
import { HttpBrowser } from "../support/http-browser.js";
import { startShippedSignon, type ShippedSignon } from "../support/listening.js";
import { postedFields, startSamlIdentityProvider, type ScriptedSamlProvider } from "@tessera/test-support/saml-identity-provider";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
let signon: ShippedSignon;
let idp: ScriptedSamlProvider;
let organisation: Organisation;
let providerId: string;
let people = 0;
const domain = "agency.example.gov.uk";

beforeAll(async () => {
  signon = await startShippedSignon(database);
  idp = await startSamlIdentityProvider(`${signon.issuer}/sign-in/upstream/saml/metadata`);
  organisation = await createOrganisation(signon.ctx, { slug: "agency", name: "Agency" });
}, 60_000);
afterAll(async () => {
  await idp?.close();
  await signon?.close();
  await database.close();
});
beforeEach(async () => {
  idp.script = {};
  const { provider } = await connectSamlProvider(signon.ctx, organisation, { metadata: idp.metadata, domains: domain }, { uid: null, origin: null });
  providerId = provider.id;
});

async function member() {
  people += 1;
  const email = `person${people}@${domain}`;
  const user = await createUser(signon.ctx, { email, name: `Person ${people}`, organisationId: organisation.id });
  idp.person = { nameId: `persistent-${people}`, email, name: `Person ${people}` };
  return user;
}

/** Types the address, follows the AuthnRequest to the IdP, and returns its HTTP-POST page's fields. */
async function toIdp(browser: HttpBrowser, email: string, returnTo = "/") {
  const form = parseSignInForm(await (await browser.request(`/sign-in?return_to=${encodeURIComponent(returnTo)}`)).text());
  const posted = await browser.request("/sign-in", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: form.csrfToken, return_to: form.returnTo, email, password: "" }).toString(),
  });
  expect(posted.status).toBe(303);
  const location = posted.headers.get("location")!;
  expect(location.startsWith(`${idp.signOnUrl}?SAMLRequest=`)).toBe(true);
  return postedFields(await (await fetch(location)).text());
}

async function postAnswer(browser: HttpBrowser, fields: { SAMLResponse: string; RelayState: string }) {
  return browser.request("/sign-in/upstream/saml/acs", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ SAMLResponse: fields.SAMLResponse, RelayState: fields.RelayState }).toString(),
  });
}

/** The whole sign-in: to the IdP, its answer posted back, then the browser's own return; the last answer. */
async function signInThroughIdp(browser: HttpBrowser, email: string, returnTo = "/") {
  const fields = await toIdp(browser, email, returnTo);
  const answered = await postAnswer(browser, fields);
  if (answered.status !== 303) return answered;
  return browser.request(answered.headers.get("location")!);
}

async function lastRefusal() {
  const [event] = await signon.ctx.db.select().from(auditEvents).where(eq(auditEvents.action, "upstream_sign_in_refused")).orderBy(desc(auditEvents.id)).limit(1);
  return event?.details as { reason: string; detail?: string; email?: string } | undefined;
}

async function isSignedIn(browser: HttpBrowser): Promise<boolean> {
  return (await browser.request("/")).status === 200;
}

describe("SAML sign-in", () => {
  it("sends an AuthnRequest for a persistent NameID and signs the person in from a signed assertion, linking the account", async () => {
    const user = await member();
    const browser = new HttpBrowser(signon.issuer);
    const done = await signInThroughIdp(browser, user.email, "/account");
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe("/account");
    expect(idp.lastRequest).toContain('AssertionConsumerServiceURL="' + `${signon.issuer}/sign-in/upstream/saml/acs"`);
    expect(idp.lastRequest).toContain("urn:oasis:names:tc:SAML:2.0:nameid-format:persistent");
    expect(await isSignedIn(browser)).toBe(true);
    const [link] = await signon.ctx.db.select().from(upstreamIdentities).where(eq(upstreamIdentities.userUid, user.uid));
    expect(link).toMatchObject({ providerId, subject: idp.person.nameId });
    const [session] = await signon.ctx.db.select().from(sessions).where(eq(sessions.userUid, user.uid));
    expect(session).toMatchObject({ upstreamProviderId: providerId, upstreamSessionId: "_session-1", authenticationMethods: ["pwd"] });
  });

  it("serves Sign-on's service provider metadata", async () => {
    const metadata = await fetch(`${signon.issuer}/sign-in/upstream/saml/metadata`);
    expect(metadata.status).toBe(200);
    const xml = await metadata.text();
    expect(xml).toContain(`entityID="${signon.issuer}/sign-in/upstream/saml/metadata"`);
    expect(xml).toContain(`Location="${signon.issuer}/sign-in/upstream/saml/acs"`);
  });

  it("takes an MFA authentication context as the second factor", async () => {
    const user = await member();
    idp.person = { ...idp.person, authnContext: "https://refeds.org/profile/mfa" };
    const browser = new HttpBrowser(signon.issuer);
    expect((await signInThroughIdp(browser, user.email)).status).toBe(303);
    const [session] = await signon.ctx.db.select().from(sessions).where(eq(sessions.userUid, user.uid));
    expect(session?.authenticationMethods).toEqual(["mfa"]);
  });

  const refusals: [string, () => void, string, string][] = [
    ["an unsigned assertion", () => (idp.script = { signing: "none" }), "invalid_answer", "Invalid signature"],
    ["an assertion signed by another key", () => (idp.script = { signing: "other_key" }), "invalid_answer", "Invalid signature"],
    ["a wrapped assertion (XML signature wrapping)", () => (idp.script = { signing: "wrapped" }), "invalid_answer", "Invalid signature: multiple assertions"],
    ["an expired assertion", () => (idp.script = { validForSeconds: -120 }), "invalid_answer", "No valid subject confirmation"],
    ["an assertion for another audience", () => (idp.script = { audience: "https://other-sp.example/metadata" }), "invalid_answer", "audience mismatch"],
    ["an answer to another request", () => (idp.script = { inResponseTo: "_not-the-request" }), "invalid_answer", "InResponseTo is not valid"],
    ["an assertion from another issuer", () => (idp.script = { assertionIssuer: "https://other-idp.example/metadata" }), "invalid_answer", "not the provider's entity id"],
    ["a transient NameID", () => (idp.script = { nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:transient" }), "invalid_answer", "transient"],
    ["a signed assertion that does not answer the request itself", () => (idp.script = { unboundConfirmation: true }), "invalid_answer", "does not answer Sign-on's request"],
    ["a failure status (the IdP did not sign the person in)", () => (idp.script = { status: "urn:oasis:names:tc:SAML:2.0:status:Responder" }), "provider_refused", "Responder"],
  ];
  it.each(refusals)("refuses %s with a page and an event", async (_name, script, reason, detail) => {
    const user = await member();
    script();
    const browser = new HttpBrowser(signon.issuer);
    const answered = await signInThroughIdp(browser, user.email);
    expect(answered.status).toBe(reason === "provider_refused" ? 403 : 400);
    expect(await lastRefusal()).toMatchObject({ reason, email: user.email, detail: expect.stringContaining(detail) });
    expect(await isSignedIn(browser)).toBe(false);
  });

  it("refuses a replayed answer, and an answer brought back to another browser", async () => {
    const user = await member();
    const browser = new HttpBrowser(signon.issuer);
    const fields = await toIdp(browser, user.email);
    const first = await postAnswer(browser, fields);
    expect(first.status).toBe(303);
    expect((await postAnswer(browser, fields)).status).toBe(400);
    // Checked, but followed by a browser without the sign-in's cookie: refused, and the answer is gone.
    const stranger = new HttpBrowser(signon.issuer);
    expect((await stranger.request(first.headers.get("location")!)).status).toBe(400);
    expect((await browser.request(first.headers.get("location")!)).status).toBe(400);
    expect(await isSignedIn(browser)).toBe(false);

    // The same response, posted for a newer sign-in: it answers another request.
    const newer = await toIdp(browser, user.email);
    expect((await postAnswer(browser, { SAMLResponse: fields.SAMLResponse, RelayState: newer.RelayState })).status).toBe(400);
    expect((await lastRefusal())?.reason).toBe("invalid_answer");
  });

  it("ends the person's sessions at a signed single logout request, once, and answers the IdP", async () => {
    const user = await member();
    const browser = new HttpBrowser(signon.issuer);
    await signInThroughIdp(browser, user.email);
    expect(await isSignedIn(browser)).toBe(true);
    const sloUrl = `${signon.issuer}/sign-in/upstream/${providerId}/saml/logout`;
    for (const signing of ["none", "other_key"] as const) {
      const refused = await fetch(idp.logoutUrl(sloUrl, idp.person.nameId, { signing }), { redirect: "manual" });
      expect(refused.status, signing).toBe(400);
      expect(await isSignedIn(browser)).toBe(true);
    }
    const url = idp.logoutUrl(sloUrl, idp.person.nameId, { sessionIndex: "_session-1", id: `_logout-${people}` });
    const answered = await fetch(url, { redirect: "manual" });
    expect(answered.status).toBe(303);
    const back = new URL(answered.headers.get("location")!);
    expect(back.href.startsWith(`${idp.signOnUrl.replace("/sso", "/slo")}?SAMLResponse=`)).toBe(true);
    expect(back.searchParams.get("RelayState")).toBe("idp-relay");
    expect(await isSignedIn(browser)).toBe(false);
    const [event] = await signon.ctx.db.select().from(auditEvents).where(eq(auditEvents.subjectUid, user.uid)).orderBy(desc(auditEvents.id)).limit(1);
    expect(event).toMatchObject({ action: "upstream_logout", details: expect.objectContaining({ sessions_ended: 1, by: "saml" }) });
    // The same request again: refused as a replay.
    expect((await fetch(url, { redirect: "manual" })).status).toBe(400);
    // Signed, but issued ten minutes ago (from a log, say), or inflating to more than 256 KB: refused before anything else.
    await signInThroughIdp(browser, user.email);
    for (const options of [{ issuedSecondsAgo: 600 }, { padding: 300_000 }]) {
      expect((await fetch(idp.logoutUrl(sloUrl, idp.person.nameId, options), { redirect: "manual" })).status).toBe(400);
    }
    expect(await isSignedIn(browser)).toBe(true);
  });

  it("refuses to connect an IdP that wants signed requests while Sign-on has no signing key", async () => {
    const other = await createOrganisation(signon.ctx, { slug: `wants-signed-${people}`, name: `Wants signed ${people}` });
    await expect(connectSamlProvider(signon.ctx, other, { metadata: idp.signedRequestsMetadata, domains: `wants-signed-${people}.example.org` }, { uid: null, origin: null })).rejects.toThrow(
      "This identity provider wants signed requests",
    );
  });

  it("answers a malformed post with 400, never a 500", async () => {
    const browser = new HttpBrowser(signon.issuer);
    for (const SAMLResponse of ["not base64 !", Buffer.from("<not-xml").toString("base64"), Buffer.from("\u0000").toString("base64")]) {
      const answer = await postAnswer(browser, { SAMLResponse, RelayState: "nothing-waits" });
      expect(answer.status).toBe(400);
    }
    const fields = await toIdp(browser, (await member()).email);
    const garbage = await postAnswer(browser, { SAMLResponse: Buffer.from("<samlp:Response xmlns:samlp='urn:oasis:names:tc:SAML:2.0:protocol'/>").toString("base64"), RelayState: fields.RelayState });
    expect(garbage.status).toBe(400);
  });
});

describe("SAML sign-in with Sign-on's own signing key", () => {
  let signing: ShippedSignon;
  let strictIdp: ScriptedSamlProvider;
  let folder: string;
  const strictDomain = "strict.example.gov.uk";

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "signon-saml-sp-"));
    const files = { certFile: join(folder, "sp.crt"), keyFile: join(folder, "sp.key") };
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", files.keyFile, "-out", files.certFile, "-days", "2", "-subj", "/CN=signon-sp"], { stdio: "ignore" });
    signing = await startShippedSignon(database, { SIGNON_SAML_SIGNING_CERT: files.certFile, SIGNON_SAML_SIGNING_KEY: files.keyFile });
    strictIdp = await startSamlIdentityProvider(`${signing.issuer}/sign-in/upstream/saml/metadata`);
    strictIdp.requestSigner = readFileSync(files.certFile, "utf8");
    const strict = await createOrganisation(signing.ctx, { slug: "strict", name: "Strict" });
    const ctx = { ...signing.ctx, config: { ...signing.ctx.config, samlSigning: files } };
    await connectSamlProvider(ctx, strict, { metadata: strictIdp.signedRequestsMetadata, domains: strictDomain }, { uid: null, origin: null });
  }, 60_000);
  afterAll(async () => {
    await strictIdp?.close();
    await signing?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it("signs its AuthnRequests and publishes its certificate in its metadata", async () => {
    const user = await createUser(signing.ctx, { email: `someone@${strictDomain}` });
    strictIdp.person = { nameId: "strict-1", email: user.email };
    const browser = new HttpBrowser(signing.issuer);
    const form = parseSignInForm(await (await browser.request("/sign-in")).text());
    const posted = await browser.request("/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: form.csrfToken, return_to: "/", email: user.email, password: "" }).toString(),
    });
    const atIdp = await fetch(posted.headers.get("location")!);
    expect(atIdp.status).toBe(200);
    expect(strictIdp.lastRequestSigned).toBe(true);
    const fields = postedFields(await atIdp.text());
    const answered = await browser.request("/sign-in/upstream/saml/acs", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ SAMLResponse: fields.SAMLResponse, RelayState: fields.RelayState }).toString(),
    });
    expect((await browser.request(answered.headers.get("location")!)).status).toBe(303);
    expect((await browser.request("/")).status).toBe(200);
    const metadata = await (await fetch(`${signing.issuer}/sign-in/upstream/saml/metadata`)).text();
    expect(metadata).not.toContain(readFileSync(join(folder, "sp.key"), "utf8").split("\n")[1]);
    expect(metadata).toContain(readFileSync(join(folder, "sp.crt"), "utf8").replace(/-----[^-]+-----/g, "").replace(/\s+/g, "").slice(0, 60));
  });
});
