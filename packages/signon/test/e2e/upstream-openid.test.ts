// Sign-in through an organisation's own OpenID Connect provider, against Sign-on as shipped and a provider over real
// HTTP whose answers each test scripts (test/support/scripted-openid-provider.ts).
import { desc, eq } from "drizzle-orm";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { suspendUser } from "../../src/accounts/manage-users.js";
import { auditEvents, sessions, upstreamIdentities, users } from "../../src/db/schema.js";
import { grantPermissions } from "../../src/applications/permissions.js";
import { connectOpenIdProvider } from "../../src/identity-providers/connect.js";
import { openIdSettingsOf, setOpenIdSettings } from "../../src/oidc/client-settings.js";
import type { Organisation } from "../../src/repositories/organisations.js";
import { findUserByUid } from "../../src/repositories/users.js";
import { sealSecret } from "../../src/security/secret-box.js";
import { parseSignInForm } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { HttpBrowser } from "../support/http-browser.js";
import { startShippedSignon, type ShippedSignon } from "../support/listening.js";
import { startScriptedProvider, type ScriptedProvider } from "../support/scripted-openid-provider.js";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
let signon: ShippedSignon;
let provider: ScriptedProvider;
let organisation: Organisation;
let providerId: string;
let people = 0;

const domain = "dept.example.gov.uk";
const nobody = { uid: null, origin: null };

async function connect(settings: { createAccounts?: boolean; passwordAddresses?: string; secondFactorContexts?: string } = {}) {
  const { provider: connected } = await connectOpenIdProvider(
    signon.ctx,
    organisation,
    { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret, domains: domain, ...settings },
    nobody,
  );
  providerId = connected.id;
}

beforeAll(async () => {
  // A short time limit, so that a slow provider's test waits 2 seconds, not the default 10.
  signon = await startShippedSignon(database, { SIGNON_UPSTREAM_TIMEOUT_SECONDS: "2" });
  provider = await startScriptedProvider(`${signon.issuer}/sign-in/upstream/callback`);
  organisation = await createOrganisation(signon.ctx, { slug: "dept", name: "Department" });
  await connect();
});
afterAll(async () => {
  await provider?.close();
  await signon?.close();
  await database.close();
});
beforeEach(async () => {
  provider.script = {};
  await connect();
});

/** A person of the organisation with a Sign-on account, and the provider vouching for them (verified address). */
async function member(options: { organisationId?: string | null } = {}) {
  people += 1;
  const email = `person${people}@${domain}`;
  const user = await createUser(signon.ctx, { email, name: `Person ${people}`, organisationId: options.organisationId === undefined ? organisation.id : (options.organisationId ?? undefined) });
  provider.person = { sub: `subject-${people}`, email, email_verified: true, name: `Person ${people}` };
  return user;
}

/** Types the address on the sign-in page, with no password, and follows the provider back; returns the callback's answer. */
async function signInThroughProvider(browser: HttpBrowser, email: string, returnTo = "/") {
  const form = parseSignInForm(await (await browser.request(`/sign-in?return_to=${encodeURIComponent(returnTo)}`)).text());
  const posted = await browser.request("/sign-in", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: form.csrfToken, return_to: form.returnTo, email, password: "" }).toString(),
  });
  expect(posted.status).toBe(303);
  const toProvider = posted.headers.get("location")!;
  expect(toProvider.startsWith(`${provider.issuer}/authorize?`)).toBe(true);
  const atProvider = await fetch(toProvider, { redirect: "manual" });
  const back = atProvider.headers.get("location")!;
  expect(back.startsWith(`${signon.issuer}/sign-in/upstream/callback?`)).toBe(true);
  return { response: await browser.request(back), callback: back };
}

async function eventsOf(action: string) {
  return signon.ctx.db.select().from(auditEvents).where(eq(auditEvents.action, action as never)).orderBy(desc(auditEvents.id));
}

async function lastRefusal() {
  const [event] = await eventsOf("upstream_sign_in_refused");
  return event?.details as { reason: string; detail?: string; provider_id?: string } | undefined;
}

async function isSignedIn(browser: HttpBrowser): Promise<boolean> {
  const home = await browser.request("/");
  return home.status === 200;
}

describe("identifier first", () => {
  it("sends an address at a connected domain to the provider with PKCE, state, nonce and the address as login_hint", async () => {
    const user = await member();
    const browser = new HttpBrowser(signon.issuer);
    const { response } = await signInThroughProvider(browser, user.email.toUpperCase(), "/account");
    const sent = provider.lastAuthorization!;
    expect(sent.get("response_type")).toBe("code");
    expect(sent.get("client_id")).toBe(provider.clientId);
    expect(sent.get("code_challenge_method")).toBe("S256");
    expect(sent.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sent.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sent.get("nonce")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sent.get("login_hint")).toBe(user.email);
    expect(sent.get("scope")).toBe("openid email profile");
    expect(sent.get("redirect_uri")).toBe(`${signon.issuer}/sign-in/upstream/callback`);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/account");
    expect(await isSignedIn(browser)).toBe(true);
  });

  it("links the account by verified address the first time and by subject afterwards, taking over a new name and address", async () => {
    const user = await member();
    const first = new HttpBrowser(signon.issuer);
    await signInThroughProvider(first, user.email);
    const [link] = await signon.ctx.db.select().from(upstreamIdentities).where(eq(upstreamIdentities.userUid, user.uid));
    expect(link).toMatchObject({ providerId, subject: provider.person.sub });
    expect((await eventsOf("upstream_identity_linked")).some((event) => event.subjectUid === user.uid)).toBe(true);

    // Renamed upstream: the subject still finds the account, which takes the new name and address.
    const renamed = `renamed${people}@${domain}`;
    provider.person = { ...provider.person, email: renamed, name: "New Name" };
    const again = new HttpBrowser(signon.issuer);
    const { response } = await signInThroughProvider(again, renamed);
    expect(response.status).toBe(303);
    const stored = await findUserByUid(signon.ctx.db, user.uid);
    expect(stored).toMatchObject({ email: renamed, name: "New Name" });
  });

  it("leaves other addresses to the password form, and asks for a password left empty", async () => {
    const user = await createUser(signon.ctx);
    const browser = new HttpBrowser(signon.issuer);
    const form = parseSignInForm(await (await browser.request("/sign-in")).text());
    const empty = await browser.request("/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: form.csrfToken, return_to: "/", email: user.email, password: "" }).toString(),
    });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain("Enter your password.");
    const signedIn = await browser.request("/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: form.csrfToken, return_to: "/", email: user.email, password: defaultPassword }).toString(),
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe("/");
  });

  it("never checks a password for a connected domain, but lets a break-glass address sign in with one", async () => {
    const user = await member();
    const breakGlass = await member();
    await connect({ passwordAddresses: breakGlass.email });
    const browser = new HttpBrowser(signon.issuer);
    const form = parseSignInForm(await (await browser.request("/sign-in")).text());
    const post = (email: string) =>
      browser.request("/sign-in", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _csrf: form.csrfToken, return_to: "/", email, password: defaultPassword }).toString(),
      });
    const sent = await post(user.email);
    expect(sent.status).toBe(303);
    expect(sent.headers.get("location")!.startsWith(provider.issuer)).toBe(true);
    const byPassword = await post(breakGlass.email);
    expect(byPassword.status).toBe(303);
    expect(byPassword.headers.get("location")).toBe("/");
    expect(await isSignedIn(browser)).toBe(true);
  });
});

describe("accounts", () => {
  it("refuses a person without an account unless the organisation creates them, then creates them in it", async () => {
    provider.person = { sub: "new-person", email: `new@${domain}`, email_verified: true, name: "New Person" };
    const refused = await signInThroughProvider(new HttpBrowser(signon.issuer), `new@${domain}`);
    expect(refused.response.status).toBe(403);
    expect(await refused.response.text()).toContain("You do not have a Sign-on account yet.");
    expect((await lastRefusal())?.reason).toBe("no_account");

    await connect({ createAccounts: true });
    const browser = new HttpBrowser(signon.issuer);
    const created = await signInThroughProvider(browser, `new@${domain}`);
    expect(created.response.status).toBe(303);
    const [user] = await signon.ctx.db.select().from(users).where(eq(users.email, `new@${domain}`));
    expect(user).toMatchObject({ name: "New Person", organisationId: organisation.id, passwordHash: null });
  });

  it("refuses an address the provider does not say is verified, at another domain, or of another organisation's account", async () => {
    const user = await member();
    provider.person = { ...provider.person, email_verified: false };
    const unverified = await signInThroughProvider(new HttpBrowser(signon.issuer), user.email);
    expect(unverified.response.status).toBe(403);
    expect((await lastRefusal())?.reason).toBe("email_unverified");

    provider.person = { sub: "elsewhere", email: `someone@other.example.org`, email_verified: true };
    const otherDomain = await signInThroughProvider(new HttpBrowser(signon.issuer), user.email);
    expect(otherDomain.response.status).toBe(403);
    expect((await lastRefusal())?.reason).toBe("domain_not_connected");

    const elsewhere = await createOrganisation(signon.ctx, { slug: `elsewhere-${people}`, name: `Elsewhere ${people}` });
    const theirs = await member({ organisationId: elsewhere.id });
    const other = await signInThroughProvider(new HttpBrowser(signon.issuer), theirs.email);
    expect(other.response.status).toBe(403);
    expect(await other.response.text()).toContain("belongs to another organisation");
    expect((await lastRefusal())?.reason).toBe("other_organisation");
  });

  it("refuses a linked person moved to another organisation since", async () => {
    const user = await member();
    await signInThroughProvider(new HttpBrowser(signon.issuer), user.email);
    const elsewhere = await createOrganisation(signon.ctx, { slug: `moved-to-${people}`, name: `Moved to ${people}` });
    await signon.ctx.db.update(users).set({ organisationId: elsewhere.id }).where(eq(users.uid, user.uid));
    const refused = await signInThroughProvider(new HttpBrowser(signon.issuer), user.email);
    expect(refused.response.status).toBe(403);
    expect((await lastRefusal())?.reason).toBe("other_organisation");
  });

  it("forgets every link when the organisation moves to another issuer, whose subjects mean other people", async () => {
    const user = await member();
    await signInThroughProvider(new HttpBrowser(signon.issuer), user.email);
    expect(await signon.ctx.db.select().from(upstreamIdentities).where(eq(upstreamIdentities.providerId, providerId))).not.toEqual([]);
    await connectOpenIdProvider(signon.ctx, organisation, { issuer: `${provider.issuer}/`, clientId: provider.clientId, clientSecret: provider.clientSecret, domains: domain }, nobody);
    expect(await signon.ctx.db.select().from(upstreamIdentities).where(eq(upstreamIdentities.providerId, providerId))).toEqual([]);
    const [event] = await eventsOf("identity_provider_changed");
    expect(event?.details).toMatchObject({ links_forgotten: expect.any(Number) });
  });

  it("asks the provider for a new sign-in when the application asked Sign-on for one (prompt=login)", async () => {
    const user = await member();
    const browser = new HttpBrowser(signon.issuer);
    const sent = await browser.request(`/sign-in?prompt=login&login_hint=${encodeURIComponent(user.email)}`);
    expect(sent.status).toBe(303);
    await fetch(sent.headers.get("location")!, { redirect: "manual" });
    expect(provider.lastAuthorization?.get("prompt")).toBe("login");
    const form = parseSignInForm(await (await browser.request("/sign-in?prompt=login")).text());
    const posted = await browser.request("/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: form.csrfToken, return_to: "/", email: user.email, password: "", prompt: "login" }).toString(),
    });
    expect(new URL(posted.headers.get("location")!).searchParams.get("prompt")).toBe("login");
  });

  it("refuses a suspended person", async () => {
    const user = await member();
    await suspendUser(signon.ctx, user.email, "left the department");
    const refused = await signInThroughProvider(new HttpBrowser(signon.issuer), user.email);
    expect(refused.response.status).toBe(403);
    expect((await lastRefusal())?.reason).toBe("suspended");
  });

  it("refuses a person the provider does not sign in (disabled or deleted there)", async () => {
    const user = await member();
    provider.script = { authorizationError: "access_denied" };
    const refused = await signInThroughProvider(new HttpBrowser(signon.issuer), user.email);
    expect(refused.response.status).toBe(403);
    expect(await refused.response.text()).toContain("did not sign you in");
    expect(await lastRefusal()).toMatchObject({ reason: "provider_refused", detail: expect.stringContaining("access_denied") });
  });
});

describe("2-step", () => {
  async function withTwoStep() {
    const user = await member();
    const key = Buffer.from("5e".repeat(32), "hex");
    await signon.ctx.db.update(users).set({ otpEnabledAt: new Date(), otpSecretEncrypted: sealSecret(key, "JBSWY3DPEHPK3PXP") }).where(eq(users.uid, user.uid));
    return user;
  }

  it("takes a second factor the provider shows (amr mfa) in place of Sign-on's, and records it", async () => {
    const user = await withTwoStep();
    provider.person = { ...provider.person, amr: ["pwd", "mfa"] };
    const browser = new HttpBrowser(signon.issuer);
    const { response } = await signInThroughProvider(browser, user.email);
    expect(response.headers.get("location")).toBe("/");
    const [session] = await signon.ctx.db.select().from(sessions).where(eq(sessions.userUid, user.uid));
    expect(session).toMatchObject({ authenticationMethods: ["pwd", "mfa"], upstreamProviderId: providerId, awaitingSecondFactor: false });
  });

  it("gives applications' ID tokens the methods the provider reported, and goes on to the application after the provider", async () => {
    const user = await withTwoStep();
    const wiki = await createApp(signon.ctx, { name: `Wiki ${people}`, redirectUris: ["http://127.0.0.1:9/callback"] });
    await setOpenIdSettings(signon.ctx, wiki.application, { ...openIdSettingsOf(wiki.application), scopes: ["openid", "profile", "email"] }, nobody);
    await grantPermissions(signon.ctx, { email: user.email, application: wiki.application.name, permissions: ["signin"] });
    provider.person = { ...provider.person, amr: ["pwd", "mfa"] };
    const browser = new HttpBrowser(signon.issuer);
    const authorize = `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: wiki.clientId, redirect_uri: wiki.redirectUri, state: "s", scope: "openid", nonce: "n" })}`;
    // The application sends the person to Sign-on; the sign-in goes through the provider and comes back to the authorization.
    const { response } = await signInThroughProvider(browser, user.email, authorize);
    expect(response.headers.get("location")).toBe(authorize);
    const authorized = await browser.request(authorize);
    const code = new URL(authorized.headers.get("location")!).searchParams.get("code")!;
    const tokens = (await (
      await fetch(`${signon.issuer}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: wiki.redirectUri, client_id: wiki.clientId, client_secret: wiki.clientSecret }).toString(),
      })
    ).json()) as { id_token: string };
    expect(decodeJwt(tokens.id_token)).toMatchObject({ sub: user.uid, amr: ["pwd", "mfa"], nonce: "n" });
  });

  it("asks for Sign-on's own code when the provider shows one factor, unless its acr is one the organisation counts", async () => {
    const user = await withTwoStep();
    provider.person = { ...provider.person, amr: ["pwd"], acr: "urn:example:loa:2" };
    const { response } = await signInThroughProvider(new HttpBrowser(signon.issuer), user.email);
    expect(response.headers.get("location")).toMatch(/^\/sign-in\/two-step\?/);
    await connect({ secondFactorContexts: "urn:example:loa:2" });
    const counted = await signInThroughProvider(new HttpBrowser(signon.issuer), user.email);
    expect(counted.response.headers.get("location")).toBe("/");
    const recorded = await signon.ctx.db.select().from(sessions).where(eq(sessions.userUid, user.uid));
    expect(recorded.map((session) => session.authenticationMethods)).toContainEqual(["pwd", "mfa"]);
  });
});

describe("what the provider answers wrongly", () => {
  const cases: [string, () => void][] = [
    ["another issuer", () => (provider.script = { claims: (claims) => ({ ...claims, iss: "https://evil.example" }) })],
    ["another audience", () => (provider.script = { claims: (claims) => ({ ...claims, aud: "someone-else" }) })],
    ["an expired ID token", () => (provider.script = { claims: (claims) => ({ ...claims, iat: claims.iat! - 3600, exp: claims.iat! - 1800 }) })],
    ["an ID token issued in the future", () => (provider.script = { claims: (claims) => ({ ...claims, iat: claims.iat! + 3600, exp: claims.iat! + 7200 }) })],
    ["another nonce", () => (provider.script = { claims: (claims) => ({ ...claims, nonce: "not-the-one-sent" }) })],
    ["a signature by a key it does not publish", () => (provider.script = { signing: "other" })],
    ["alg none", () => (provider.script = { signing: "none" })],
  ];
  it.each(cases)("refuses %s with a page and an event", async (_name, script) => {
    const user = await member();
    script();
    const browser = new HttpBrowser(signon.issuer);
    const { response } = await signInThroughProvider(browser, user.email);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("could not check");
    expect(await lastRefusal()).toMatchObject({ reason: "invalid_answer", provider_id: providerId });
    expect(await isSignedIn(browser)).toBe(false);
  });

  it("fetches the provider's keys once more for an unknown key id, then refuses; a key published since is taken", async () => {
    const user = await member();
    provider.script = { signing: "unknown_kid" };
    const before = provider.jwksFetches;
    const refused = await signInThroughProvider(new HttpBrowser(signon.issuer), user.email);
    expect(refused.response.status).toBe(400);
    expect(provider.jwksFetches - before).toBeLessThanOrEqual(2);
    expect(provider.jwksFetches - before).toBeGreaterThanOrEqual(1);
    provider.publishNewKey();
    const taken = await signInThroughProvider(new HttpBrowser(signon.issuer), user.email);
    expect(taken.response.status).toBe(303);
  });

  it("refuses an answer replayed, or brought to another browser", async () => {
    const user = await member();
    const browser = new HttpBrowser(signon.issuer);
    const { response, callback } = await signInThroughProvider(browser, user.email);
    expect(response.status).toBe(303);
    const replayed = await browser.request(callback);
    expect(replayed.status).toBe(400);
    expect(await replayed.text()).toContain("already been used");

    // The answer to one browser's sign-in, opened in another (no cookie with its state): refused.
    const form = parseSignInForm(await (await browser.request("/sign-in?prompt=login")).text());
    const posted = await browser.request("/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: form.csrfToken, return_to: "/", email: user.email, password: "" }).toString(),
    });
    const back = (await fetch(posted.headers.get("location")!, { redirect: "manual" })).headers.get("location")!;
    const stranger = await new HttpBrowser(signon.issuer).request(back);
    expect(stranger.status).toBe(400);
    expect(await stranger.text()).toContain("was started in another browser");
  });

  it("gives up on a slow provider at the time limit, with the same page, and takes it again once it answers", async () => {
    const user = await member();
    provider.script = { delayMs: 3500 };
    const browser = new HttpBrowser(signon.issuer);
    const form = parseSignInForm(await (await browser.request("/sign-in")).text());
    const slow = await browser.request("/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: form.csrfToken, return_to: "/", email: user.email, password: "" }).toString(),
    });
    expect(slow.status).toBe(502);
    expect(await lastRefusal()).toMatchObject({ reason: "provider_unavailable", email: user.email });
    provider.script = {};
    expect((await signInThroughProvider(new HttpBrowser(signon.issuer), user.email)).response.status).toBe(303);
  });

  it("shows a clear page when the provider does not answer, and the password form still works for others", async () => {
    const user = await member();
    await connect();
    // A provider whose discovery cannot be fetched: settings changed to an issuer nobody answers at.
    await connectOpenIdProvider(signon.ctx, organisation, { issuer: "http://127.0.0.1:9", clientId: provider.clientId, clientSecret: provider.clientSecret, domains: domain }, nobody);
    const browser = new HttpBrowser(signon.issuer);
    const form = parseSignInForm(await (await browser.request("/sign-in")).text());
    const down = await browser.request("/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: form.csrfToken, return_to: "/", email: user.email, password: "" }).toString(),
    });
    expect(down.status).toBe(502);
    expect(await down.text()).toContain("did not answer in time");
    expect((await lastRefusal())?.reason).toBe("provider_unavailable");
    const other = await createUser(signon.ctx);
    const byPassword = await browser.request("/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: form.csrfToken, return_to: "/", email: other.email, password: defaultPassword }).toString(),
    });
    expect(byPassword.status).toBe(303);
  });
});

describe("back-channel logout", () => {
  async function postLogout(token: string) {
    return fetch(`${signon.issuer}/sign-in/upstream/${providerId}/backchannel-logout`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ logout_token: token }).toString(),
    });
  }

  it("ends every session of the person through the provider for a sub, once", async () => {
    const user = await member();
    const browser = new HttpBrowser(signon.issuer);
    await signInThroughProvider(browser, user.email);
    expect(await isSignedIn(browser)).toBe(true);
    const token = await provider.logoutToken({ sub: provider.person.sub });
    const answer = await postLogout(token);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(await isSignedIn(browser)).toBe(false);
    const [event] = (await eventsOf("upstream_logout")).filter((row) => row.subjectUid === user.uid);
    expect(event?.details).toMatchObject({ sessions_ended: 1, by: "sub" });
    expect((await postLogout(token)).status).toBe(400);
  });

  it("ends the one provider session a sid names", async () => {
    const user = await member();
    provider.person = { ...provider.person, sid: "session-a" };
    const first = new HttpBrowser(signon.issuer);
    await signInThroughProvider(first, user.email);
    provider.person = { ...provider.person, sid: "session-b" };
    const second = new HttpBrowser(signon.issuer);
    await signInThroughProvider(second, user.email);
    expect((await postLogout(await provider.logoutToken({ sid: "session-a" }))).status).toBe(200);
    expect(await isSignedIn(first)).toBe(false);
    expect(await isSignedIn(second)).toBe(true);
  });

  const refusals: [string, () => Promise<string>][] = [
    ["unsigned", () => provider.logoutToken({ sub: "x" }, "none")],
    ["signed by another key", () => provider.logoutToken({ sub: "x" }, "other")],
    ["for another audience", () => provider.logoutToken({ sub: "x", aud: "someone-else" })],
    ["from another issuer", () => provider.logoutToken({ sub: "x", iss: "https://evil.example" })],
    ["with a nonce", () => provider.logoutToken({ sub: "x", nonce: "n" })],
    ["without the logout event", () => provider.logoutToken({ sub: "x", events: {} })],
    ["without sub or sid", () => provider.logoutToken({})],
    ["issued an hour ago", () => provider.logoutToken({ sub: "x", iat: Math.floor(Date.now() / 1000) - 3600 })],
    ["not a JWT", () => Promise.resolve("not.a.jwt")],
  ];
  it.each(refusals)("refuses a logout token %s with 400", async (_name, token) => {
    const user = await member();
    const browser = new HttpBrowser(signon.issuer);
    await signInThroughProvider(browser, user.email);
    const answer = await postLogout(await token());
    expect(answer.status).toBe(400);
    expect(await answer.json()).toEqual({ error: "invalid_request", error_description: "The logout token was not accepted." });
    expect(await isSignedIn(browser)).toBe(true);
  });

  it("answers 400 for an unknown provider and a malformed one", async () => {
    const token = await provider.logoutToken({ sub: "x" });
    const unknown = await fetch(`${signon.issuer}/sign-in/upstream/00000000-0000-4000-8000-000000000000/backchannel-logout`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ logout_token: token }).toString(),
    });
    expect(unknown.status).toBe(400);
    const malformed = await fetch(`${signon.issuer}/sign-in/upstream/not-a-uuid/backchannel-logout`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "logout_token=x" });
    expect(malformed.status).toBe(400);
  });
});
