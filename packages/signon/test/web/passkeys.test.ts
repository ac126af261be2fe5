import { asc, eq } from "drizzle-orm";
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { resetTwoStep } from "../../src/accounts/two-step.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { connectOpenIdProvider } from "../../src/identity-providers/connect.js";
import { openIdSettingsOf, setOpenIdSettings } from "../../src/oidc/client-settings.js";
import { forgetCachedSigningKeys } from "../../src/oidc/signing-keys.js";
import { setPersonTwoStepRequired } from "../../src/accounts/two-step-mandate.js";
import { auditEvents, passkeys, sessions } from "../../src/db/schema.js";
import { findUserByUid, type User } from "../../src/repositories/users.js";
import { sha256Hex } from "../../src/security/random.js";
import { InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { authorizeUrl, exchangeCode } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";
import { SoftAuthenticator, type Tampering } from "../support/soft-authenticator.js";

const { signon } = await useTestSignon();
const origin = { ip: "192.0.2.1", userAgent: "test" };

function csrfOf(html: string): string {
  const token = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  if (token === undefined) throw new Error(`no CSRF token in:\n${html}`);
  return token;
}

async function reload(user: User): Promise<User> {
  const fresh = await findUserByUid(signon.ctx.db, user.uid);
  if (!fresh) throw new Error("user gone");
  return fresh;
}

async function passkeysOf(user: User) {
  return signon.ctx.db.select().from(passkeys).where(eq(passkeys.userUid, user.uid));
}

async function actionsOf(user: User): Promise<string[]> {
  const rows = await signon.ctx.db.select({ action: auditEvents.action }).from(auditEvents).where(eq(auditEvents.subjectUid, user.uid)).orderBy(asc(auditEvents.id));
  return rows.map((row) => row.action);
}

async function sessionMethods(browser: InjectBrowser): Promise<string[] | undefined> {
  const id = browser.cookie("signon_session");
  if (id === undefined) return undefined;
  const [row] = await signon.ctx.db.select().from(sessions).where(eq(sessions.idHash, sha256Hex(id)));
  return row?.authenticationMethods;
}

/** Asks for registration options as the account page's script does. */
async function registrationOptions(browser: InjectBrowser): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const page = await browser.get("/account/passkeys");
  const response = await browser.postJson("/account/passkeys/options", { _csrf: csrfOf(page.body) });
  expect(response.statusCode).toBe(200);
  return response.json<PublicKeyCredentialCreationOptionsJSON>();
}

async function postRegistration(browser: InjectBrowser, fields: { name: string; response: string }) {
  return browser.submit("/account/passkeys", "/account/passkeys", fields);
}

/** A person with one passkey added through the account page, and its authenticator. */
async function userWithPasskey(options: Parameters<typeof createUser>[1] = {}): Promise<{ user: User; authenticator: SoftAuthenticator }> {
  const user = await createUser(signon.ctx, options);
  const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
  const authenticator = new SoftAuthenticator();
  const response = await postRegistration(browser, { name: "Laptop", response: JSON.stringify(authenticator.register(await registrationOptions(browser))) });
  expect(response.statusCode).toBe(303);
  return { user: await reload(user), authenticator };
}

/** Signs in with the password; the browser then waits for its second factor. */
async function passwordStep(user: User): Promise<InjectBrowser> {
  const browser = new InjectBrowser(signon.app);
  const response = await browser.signIn("/sign-in?return_to=%2Faccount", user.email, defaultPassword);
  expect(response.headers.location).toBe("/sign-in/two-step?return_to=%2Faccount");
  return browser;
}

async function secondFactorOptions(browser: InjectBrowser): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const page = await browser.get("/sign-in/two-step?return_to=%2Faccount");
  expect(page.body).toContain('data-passkey="authenticate"');
  const response = await browser.postJson("/sign-in/two-step/passkey/options", { _csrf: csrfOf(page.body) });
  expect(response.statusCode).toBe(200);
  return response.json<PublicKeyCredentialRequestOptionsJSON>();
}

async function postSecondFactor(browser: InjectBrowser, response: string) {
  return browser.submit("/sign-in/two-step?return_to=%2Faccount", "/sign-in/two-step/passkey", { response, return_to: "/account" });
}

async function passwordlessOptions(browser: InjectBrowser): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const page = await browser.get("/sign-in");
  const response = await browser.postJson("/sign-in/passkey/options", { _csrf: csrfOf(page.body) });
  expect(response.statusCode).toBe(200);
  return response.json<PublicKeyCredentialRequestOptionsJSON>();
}

async function postPasswordless(browser: InjectBrowser, response: string) {
  return browser.submit("/sign-in", "/sign-in/passkey", { response, return_to: "/account" });
}

async function passwordlessWith(authenticator: SoftAuthenticator, tampering: Tampering = {}) {
  const browser = new InjectBrowser(signon.app);
  const answer = authenticator.authenticate(await passwordlessOptions(browser), tampering);
  return { browser, response: await postPasswordless(browser, JSON.stringify(answer)) };
}

describe("GET /account/passkeys", () => {
  it("lists the person's passkeys with their name and when they were added and last used, under the pages' CSP", async () => {
    const { authenticator } = await userWithPasskey();
    const { browser } = await passwordlessWith(authenticator);
    const page = await browser.get("/account/passkeys");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("Laptop");
    // Just used to sign in: the time, not "Never".
    expect(page.body).not.toMatch(/<td>Never<\/td>/);
    expect(page.body).toContain('<script src="/assets/passkeys.js" defer></script>');
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
  });
});

describe("the passkey pages' forms", () => {
  it("carry the origin passkeys work at (the public URL's), for the script to check the page's address against", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const forms = [
      /<form [^>]*id="add-passkey"[^>]*>/.exec((await browser.get("/account/passkeys")).body)?.[0],
      /<form [^>]*id="sign-in-passkey"[^>]*>/.exec((await new InjectBrowser(signon.app).get("/sign-in")).body)?.[0],
    ];
    for (const form of forms) expect(form).toContain(' data-passkey-origin="http://localhost:3000"');
    const options = await browser.postJson("/account/passkeys/options", { _csrf: csrfOf((await browser.get("/account/passkeys")).body) });
    expect(new URL("http://localhost:3000").hostname).toBe(options.json<PublicKeyCredentialCreationOptionsJSON>().rp.id);
  });
});

describe("GET /assets/passkeys.js", () => {
  it("serves the browser script", async () => {
    const response = await signon.app.inject({ method: "GET", url: "/assets/passkeys.js" });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(response.body).toContain("navigator.credentials.create");
    expect(response.body).toContain("data-passkey-origin");
  });
});

describe("POST /account/passkeys/options", () => {
  it("refuses a post without the CSRF token with 400", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const response = await browser.postJson("/account/passkeys/options", {});
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "invalid_request", error_description: "CSRF token missing or invalid" });
  });

  it("gives the RP ID and user handle of the configured public URL and person", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const options = await registrationOptions(browser);
    expect(options.rp).toEqual({ name: "Tessera Sign-on", id: "localhost" });
    expect(Buffer.from(options.user.id, "base64url").toString("hex")).toBe(user.uid.replace(/-/g, ""));
    expect(options.attestation).toBe("none");
  });
});

describe("POST /account/passkeys", () => {
  it("adds a passkey, counts it as a second factor and audits it", async () => {
    const { user } = await userWithPasskey();
    expect(user.passkeyCount).toBe(1);
    const [stored] = await passkeysOf(user);
    expect(stored).toMatchObject({ name: "Laptop", signCount: 0, lastUsedAt: null, transports: ["internal"] });
    expect(await actionsOf(user)).toContain("passkey_registered");
  });

  it("refuses a replayed challenge with 400 and stores nothing twice", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const authenticator = new SoftAuthenticator();
    const answer = JSON.stringify(authenticator.register(await registrationOptions(browser)));
    expect((await postRegistration(browser, { name: "One", response: answer })).statusCode).toBe(303);
    const again = await postRegistration(browser, { name: "Two", response: answer });
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain("That took too long or was already used");
    expect(await passkeysOf(user)).toHaveLength(1);
  });

  it("refuses a response from another origin with 401", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const answer = new SoftAuthenticator().register(await registrationOptions(browser), { origin: "https://evil.example" });
    const response = await postRegistration(browser, { name: "Phish", response: JSON.stringify(answer) });
    expect(response.statusCode).toBe(401);
    expect(await passkeysOf(user)).toHaveLength(0);
  });

  it("refuses a response for another RP ID with 401", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const answer = new SoftAuthenticator().register(await registrationOptions(browser), { rpId: "evil.example" });
    expect((await postRegistration(browser, { name: "Other", response: JSON.stringify(answer) })).statusCode).toBe(401);
  });

  it.each([
    ["not JSON", "{"],
    ["JSON of another shape", JSON.stringify({ id: 1 })],
    ["fields that are not base64url", JSON.stringify({ id: "a+b", rawId: "a+b", type: "public-key", response: { clientDataJSON: "%%", attestationObject: "??" } })],
    ["client data that is not JSON", JSON.stringify({ id: "abc", rawId: "abc", type: "public-key", response: { clientDataJSON: "bm90IGpzb24", attestationObject: "AA" } })],
    ["an empty response (no script)", ""],
  ])("refuses %s with 400", async (_what, response) => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    await registrationOptions(browser);
    const answer = await postRegistration(browser, { name: "Broken", response });
    expect(answer.statusCode).toBe(400);
    expect(answer.body).toContain("Your browser did not create a passkey");
  });

  it("refuses a challenge handed to another person with 400", async () => {
    const other = await createUser(signon.ctx);
    const otherBrowser = await signedInBrowser(signon.app, other.email, defaultPassword);
    const stolen = new SoftAuthenticator().register(await registrationOptions(otherBrowser));
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    expect((await postRegistration(browser, { name: "Stolen", response: JSON.stringify(stolen) })).statusCode).toBe(400);
    expect(await passkeysOf(user)).toHaveLength(0);
    expect(await passkeysOf(other)).toHaveLength(0);
  });

  it("asks for a name", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const answer = new SoftAuthenticator().register(await registrationOptions(browser));
    const response = await postRegistration(browser, { name: " ", response: JSON.stringify(answer) });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain("Enter a name for the passkey");
  });
});

describe("POST /account/passkeys/:id/remove", () => {
  it("asks for confirmation, then removes the passkey, which signs in no more", async () => {
    const { user, authenticator } = await userWithPasskey();
    const [stored] = await passkeysOf(user);
    if (!stored) throw new Error("no passkey");
    const { browser } = await passwordlessWith(authenticator);
    const confirmation = await browser.get(`/account/passkeys/${stored.id}/remove`);
    expect(confirmation.body).toContain("Remove the passkey “Laptop”");
    const unconfirmed = await browser.submit(`/account/passkeys/${stored.id}/remove`, `/account/passkeys/${stored.id}/remove`, {});
    expect(unconfirmed.statusCode).toBe(400);
    expect(await passkeysOf(user)).toHaveLength(1);
    const removed = await browser.submit(`/account/passkeys/${stored.id}/remove`, `/account/passkeys/${stored.id}/remove`, { confirm: "yes" });
    expect(removed.statusCode).toBe(303);
    expect(await passkeysOf(user)).toHaveLength(0);
    expect((await reload(user)).passkeyCount).toBe(0);
    expect(await actionsOf(user)).toContain("passkey_removed");
    expect((await passwordlessWith(authenticator)).response.statusCode).toBe(401);
  });

  it("does not sign in alone once the person's organisation signs them in through its own provider", async () => {
    const organisation = await createOrganisation(signon.ctx, { slug: "passkey-upstream", name: "Passkey upstream" });
    const { user, authenticator } = await userWithPasskey({ email: "leaver@passkey-upstream.example", organisationId: organisation.id });
    expect((await passwordlessWith(authenticator)).response.statusCode).toBe(303);
    await connectOpenIdProvider(
      signon.ctx,
      organisation,
      { issuer: "https://idp.passkey-upstream.example", clientId: "c", clientSecret: "s", domains: "passkey-upstream.example" },
      { uid: null, origin: null },
    );
    const refused = await passwordlessWith(authenticator);
    expect(refused.response.statusCode).toBe(403);
    expect(refused.response.body).toContain("Your organisation signs you in with its own account");
    expect(await actionsOf(user)).toContain("sign_in_refused");
  });

  it("answers 404 for another person's passkey and leaves it", async () => {
    const { user } = await userWithPasskey();
    const [stored] = await passkeysOf(user);
    if (!stored) throw new Error("no passkey");
    const other = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, other.email, defaultPassword);
    const response = await browser.submit("/account/passkeys", `/account/passkeys/${stored.id}/remove`, { confirm: "yes" });
    expect(response.statusCode).toBe(404);
    expect(await passkeysOf(user)).toHaveLength(1);
  });
});

describe("POST /sign-in/two-step/passkey", () => {
  it("finishes the sign-in with a passkey instead of a code, recorded as password and passkey", async () => {
    const { user, authenticator } = await userWithPasskey();
    const browser = await passwordStep(user);
    const response = await postSecondFactor(browser, JSON.stringify(authenticator.authenticate(await secondFactorOptions(browser))));
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/account");
    expect(await sessionMethods(browser)).toEqual(["pwd", "hwk"]);
    expect((await browser.get("/account")).statusCode).toBe(200);
    const [stored] = await passkeysOf(user);
    expect(stored).toMatchObject({ signCount: 1, lastUsedAt: signon.clock.now() });
    expect(await actionsOf(user)).toEqual(expect.arrayContaining(["passkey_verified", "sign_in"]));
  });

  it("refuses a replayed response with 401", async () => {
    const { user, authenticator } = await userWithPasskey();
    const first = await passwordStep(user);
    const answer = JSON.stringify(authenticator.authenticate(await secondFactorOptions(first)));
    expect((await postSecondFactor(first, answer)).statusCode).toBe(303);
    const second = await passwordStep(user);
    await secondFactorOptions(second);
    expect((await postSecondFactor(second, answer)).statusCode).toBe(401);
  });

  it("refuses another person's passkey with 401 and counts it as a wrong second factor", async () => {
    const { user } = await userWithPasskey();
    const { authenticator: othersAuthenticator } = await userWithPasskey();
    const browser = await passwordStep(user);
    const response = await postSecondFactor(browser, JSON.stringify(othersAuthenticator.authenticate(await secondFactorOptions(browser))));
    expect(response.statusCode).toBe(401);
    const [failed] = await signon.ctx.db
      .select({ details: auditEvents.details })
      .from(auditEvents)
      .where(eq(auditEvents.action, "passkey_failed"))
      .orderBy(asc(auditEvents.id));
    expect(failed?.details).toMatchObject({ reason: "other_users_passkey", failures: 1 });
  });

  it("refuses a response from another origin with 401", async () => {
    const { user, authenticator } = await userWithPasskey();
    const browser = await passwordStep(user);
    const answer = authenticator.authenticate(await secondFactorOptions(browser), { origin: "http://localhost:3001" });
    expect((await postSecondFactor(browser, JSON.stringify(answer))).statusCode).toBe(401);
  });

  it("refuses a counter that went back (a cloned authenticator) with 401", async () => {
    const { user, authenticator } = await userWithPasskey();
    const first = await passwordStep(user);
    authenticator.signCount = 5;
    expect((await postSecondFactor(first, JSON.stringify(authenticator.authenticate(await secondFactorOptions(first))))).statusCode).toBe(303);
    const second = await passwordStep(user);
    const cloned = authenticator.authenticate(await secondFactorOptions(second), { counter: 3 });
    expect((await postSecondFactor(second, JSON.stringify(cloned))).statusCode).toBe(401);
    const [stored] = await passkeysOf(user);
    expect(stored?.signCount).toBe(6);
  });

  it.each([
    ["not JSON", "not json"],
    ["bad base64url", JSON.stringify({ id: "x", rawId: "x", type: "public-key", response: { clientDataJSON: "!!", authenticatorData: "AA", signature: "AA" } })],
  ])("refuses %s with 400", async (_what, response) => {
    const { user } = await userWithPasskey();
    const browser = await passwordStep(user);
    await secondFactorOptions(browser);
    expect((await postSecondFactor(browser, response)).statusCode).toBe(400);
  });

  it("answers the options request of a browser without a waiting sign-in with 401", async () => {
    const browser = new InjectBrowser(signon.app);
    const page = await browser.get("/sign-in");
    expect((await browser.postJson("/sign-in/two-step/passkey/options", { _csrf: csrfOf(page.body) })).statusCode).toBe(401);
  });
});

describe("POST /sign-in/passkey", () => {
  it("signs in with a passkey alone, recorded as a passkey sign-in", async () => {
    const { user, authenticator } = await userWithPasskey();
    const { browser, response } = await passwordlessWith(authenticator);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/account");
    expect(await sessionMethods(browser)).toEqual(["hwk"]);
    expect((await browser.get("/account")).body).toContain(user.name);
  });

  it("refuses a replayed response with 401", async () => {
    const { authenticator } = await userWithPasskey();
    const browser = new InjectBrowser(signon.app);
    const answer = JSON.stringify(authenticator.authenticate(await passwordlessOptions(browser)));
    expect((await postPasswordless(browser, answer)).statusCode).toBe(303);
    expect((await postPasswordless(new InjectBrowser(signon.app), answer)).statusCode).toBe(401);
  });

  it("refuses a response from another origin, without user verification, or for another RP ID with 401", async () => {
    const { authenticator } = await userWithPasskey();
    expect((await passwordlessWith(authenticator, { origin: "https://evil.example" })).response.statusCode).toBe(401);
    expect((await passwordlessWith(authenticator, { userVerified: false })).response.statusCode).toBe(401);
    expect((await passwordlessWith(authenticator, { rpId: "evil.example" })).response.statusCode).toBe(401);
    expect((await passwordlessWith(authenticator, { type: "webauthn.create" })).response.statusCode).toBe(401);
  });

  it("refuses a passkey nobody registered with 401", async () => {
    const stranger = new SoftAuthenticator();
    expect((await passwordlessWith(stranger)).response.statusCode).toBe(401);
  });

  it.each([
    ["not JSON", "]"],
    ["a number", "42"],
    ["bad base64url", JSON.stringify({ id: "x y", rawId: "x y", type: "public-key", response: { clientDataJSON: "e30", authenticatorData: "AA", signature: "AA" } })],
  ])("refuses %s with 400", async (_what, response) => {
    expect((await postPasswordless(new InjectBrowser(signon.app), response)).statusCode).toBe(400);
  });

  it("refuses a suspended person", async () => {
    const { user, authenticator } = await userWithPasskey();
    await signon.ctx.db.execute(`update signon.users set suspended_at = now(), suspension_reason = 'test' where uid = '${user.uid}'` as never);
    expect((await passwordlessWith(authenticator)).response.statusCode).toBe(401);
  });
});

describe("a challenge belongs to the browser it was handed to", () => {
  it("sets the passwordless binding cookie HttpOnly and SameSite=Strict for the life of a ceremony, and clears it on sign-in", async () => {
    const { authenticator } = await userWithPasskey();
    const browser = new InjectBrowser(signon.app);
    const page = await browser.get("/sign-in");
    const options = await browser.postJson("/sign-in/passkey/options", { _csrf: csrfOf(page.body) });
    const cookie = options.cookies.find((each) => each.name === "signon_passkey");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/", maxAge: 300 });
    expect(cookie?.value).toMatch(/^[0-9a-f]{64}$/);
    // A second request of the same browser (another tab) keeps its binding, so both tabs' challenges stay usable.
    const again = await browser.postJson("/sign-in/passkey/options", { _csrf: csrfOf(page.body) });
    expect(again.cookies.find((each) => each.name === "signon_passkey")?.value).toBe(cookie?.value);
    const signedIn = await postPasswordless(browser, JSON.stringify(authenticator.authenticate(options.json<PublicKeyCredentialRequestOptionsJSON>())));
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.cookies.find((each) => each.name === "signon_passkey")?.maxAge).toBe(0);
    // The other tab's challenge was spent by the sign-in.
    const otherTab = new InjectBrowser(signon.app);
    otherTab.setCookie("signon_passkey", cookie?.value ?? "");
    expect((await postPasswordless(otherTab, JSON.stringify(authenticator.authenticate(again.json<PublicKeyCredentialRequestOptionsJSON>())))).statusCode).toBe(401);
  });

  it("refuses a passwordless challenge answered from another browser with 401, and leaves it to the browser that asked", async () => {
    const { user, authenticator } = await userWithPasskey();
    const asking = new InjectBrowser(signon.app);
    const options = await passwordlessOptions(asking);
    const answer = JSON.stringify(authenticator.authenticate(options));
    const other = new InjectBrowser(signon.app);
    await passwordlessOptions(other);
    const refused = await postPasswordless(other, answer);
    expect(refused.statusCode).toBe(401);
    expect(refused.body).toContain("That passkey could not sign you in");
    expect(other.cookie("signon_session")).toBeUndefined();
    // Without any binding cookie at all, the same.
    expect((await postPasswordless(new InjectBrowser(signon.app), answer)).statusCode).toBe(401);
    const [failed] = await signon.ctx.db.select({ details: auditEvents.details }).from(auditEvents).where(eq(auditEvents.action, "sign_in_failed")).orderBy(asc(auditEvents.id));
    expect(failed?.details).toMatchObject({ reason: "unknown_challenge", method: "passkey" });
    // The browser that asked still signs in with a fresh answer to its own challenge.
    const own = await postPasswordless(asking, JSON.stringify(authenticator.authenticate(options)));
    expect(own.statusCode).toBe(303);
    expect((await asking.get("/account")).body).toContain(user.name);
  });

  it("refuses a passwordless response replayed from the same browser with 401", async () => {
    const { authenticator } = await userWithPasskey();
    const browser = new InjectBrowser(signon.app);
    const options = await passwordlessOptions(browser);
    const binding = browser.cookie("signon_passkey") ?? "";
    const answer = JSON.stringify(authenticator.authenticate(options));
    expect((await postPasswordless(browser, answer)).statusCode).toBe(303);
    await browser.submit("/", "/sign-out");
    // The binding cookie as it was (the sign-in cleared it): the challenge is spent all the same.
    browser.setCookie("signon_passkey", binding);
    expect((await postPasswordless(browser, answer)).statusCode).toBe(401);
    expect((await postPasswordless(browser, JSON.stringify(authenticator.authenticate(options)))).statusCode).toBe(401);
    expect(browser.cookie("signon_session")).toBeUndefined();
  });

  it("refuses a passwordless challenge past its five minutes with 401", async () => {
    const { authenticator } = await userWithPasskey();
    const browser = new InjectBrowser(signon.app);
    const options = await passwordlessOptions(browser);
    signon.clock.advance(301);
    expect((await postPasswordless(browser, JSON.stringify(authenticator.authenticate(options)))).statusCode).toBe(401);
  });

  it("refuses a second-factor challenge answered from another half-signed-in browser of the same person with 401", async () => {
    const { user, authenticator } = await userWithPasskey();
    const asking = await passwordStep(user);
    const options = await secondFactorOptions(asking);
    const other = await passwordStep(user);
    const refused = await postSecondFactor(other, JSON.stringify(authenticator.authenticate(options)));
    expect(refused.statusCode).toBe(401);
    expect(await sessionMethods(other)).toEqual(["pwd"]);
    const [failed] = await signon.ctx.db.select({ details: auditEvents.details }).from(auditEvents).where(eq(auditEvents.action, "passkey_failed")).orderBy(asc(auditEvents.id));
    expect(failed?.details).toMatchObject({ reason: "unknown_challenge" });
    // Not spent by the other browser: the one that asked finishes with it.
    expect((await postSecondFactor(asking, JSON.stringify(authenticator.authenticate(options)))).statusCode).toBe(303);
    expect(await sessionMethods(asking)).toEqual(["pwd", "hwk"]);
  });

  it("refuses a registration challenge answered from another session of the same person with 400, and leaves it to the one that asked", async () => {
    const user = await createUser(signon.ctx);
    const asking = await signedInBrowser(signon.app, user.email, defaultPassword);
    const other = await signedInBrowser(signon.app, user.email, defaultPassword);
    const authenticator = new SoftAuthenticator();
    const answer = JSON.stringify(authenticator.register(await registrationOptions(asking)));
    const refused = await postRegistration(other, { name: "Elsewhere", response: answer });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain("That took too long or was already used");
    expect(await passkeysOf(user)).toHaveLength(0);
    expect((await postRegistration(asking, { name: "Here", response: answer })).statusCode).toBe(303);
    expect((await passkeysOf(user)).map((passkey) => passkey.name)).toEqual(["Here"]);
  });
});

describe("how a session signed in", () => {
  it("records a password alone as pwd", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    expect(await sessionMethods(browser)).toEqual(["pwd"]);
  });
});

describe("GET /oauth/authorize with scope openid after a passkey sign-in", () => {
  /** An OpenID Connect client, a person with `signin` on it and a passkey, and the `amr` of the ID token after signing in by `signIn`. */
  async function idTokenAmr(signIn: (user: User, authenticator: SoftAuthenticator) => Promise<InjectBrowser>): Promise<unknown> {
    forgetCachedSigningKeys(signon.ctx);
    const client = await createApp(signon.ctx);
    const application = await setOpenIdSettings(signon.ctx, client.application, { ...openIdSettingsOf(client.application), scopes: ["openid"] }, { uid: null, origin: null });
    const { user, authenticator } = await userWithPasskey({ permissions: { [application.name]: ["signin"] } });
    const browser = await signIn(user, authenticator);
    const authorized = await browser.get(authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "st4te", scope: "openid" }));
    expect(authorized.statusCode).toBe(302);
    const code = new URL(authorized.headers.location as string).searchParams.get("code") as string;
    const tokens = (await exchangeCode(signon.app, client, code)).json<{ id_token: string }>();
    return decodeJwt(tokens.id_token).amr;
  }

  it("gives an ID token with amr hwk for a passkey alone", async () => {
    expect(await idTokenAmr(async (_user, authenticator) => (await passwordlessWith(authenticator)).browser)).toEqual(["hwk"]);
  });

  it("gives an ID token with amr pwd and hwk for a password then a passkey", async () => {
    const amr = await idTokenAmr(async (user, authenticator) => {
      const browser = await passwordStep(user);
      expect((await postSecondFactor(browser, JSON.stringify(authenticator.authenticate(await secondFactorOptions(browser))))).statusCode).toBe(303);
      return browser;
    });
    expect(amr).toEqual(["pwd", "hwk"]);
  });
});

describe("passkeys and 2-step verification", () => {
  it("an administrator's 2-step reset removes the person's passkeys", async () => {
    const { user, authenticator } = await userWithPasskey();
    const admin = await createUser(signon.ctx, { role: "superadmin" });
    await resetTwoStep(signon.ctx, user.uid, admin, origin);
    expect(await passkeysOf(user)).toHaveLength(0);
    expect((await reload(user)).passkeyCount).toBe(0);
    expect((await passwordlessWith(authenticator)).response.statusCode).toBe(401);
  });

  it("a passkey meets a 2-step requirement", async () => {
    const user = await createUser(signon.ctx);
    const admin = await createUser(signon.ctx, { role: "superadmin" });
    await setPersonTwoStepRequired(signon.ctx, user, true, { uid: admin.uid, origin });
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    expect((await browser.get("/account")).headers.location).toBe("/account/two-step?return_to=%2Faccount");
    const answer = new SoftAuthenticator().register(await registrationOptions(browser));
    expect((await postRegistration(browser, { name: "Key", response: JSON.stringify(answer) })).statusCode).toBe(303);
    expect((await browser.get("/account")).statusCode).toBe(200);
  });
});
