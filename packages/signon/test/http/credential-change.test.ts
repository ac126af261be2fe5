import { Secret, TOTP } from "otpauth";
import { beforeEach, describe, expect, it } from "vitest";
import { createApiUser, updateUserDetails } from "../../src/accounts/manage-users.js";
import { grantPermissions } from "../../src/applications/permissions.js";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { PushDeliveryService } from "../../src/pushes/delivery-service.js";
import type { User } from "../../src/repositories/users.js";
import { InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { FakeReceivers } from "../support/fake-receivers.js";
import { exchangeCode, getUserJson, obtainCode, refresh, type TestClient } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";
import { linkMailedTo, strongPassword, textOf } from "../web/account-support.js";

const { signon } = await useTestSignon();

let receivers: FakeReceivers;
let worker: PushDeliveryService;
beforeEach(() => {
  receivers = new FakeReceivers();
  worker = new PushDeliveryService(signon.ctx, { fetch: receivers.fetch, random: () => 0.5 });
});

async function deliverDue(): Promise<void> {
  while ((await worker.runOnce()) > 0);
}

/** The reauth pushes received since the last call, as "host uid". */
async function reauthsDelivered(): Promise<string[]> {
  await deliverDue();
  const reauths = receivers.received.filter((push) => push.method === "POST" && push.url.endsWith("/reauth")).map((push) => push.url);
  receivers.received.length = 0;
  return reauths.sort();
}

interface IssuedTokens {
  client: TestClient;
  access_token: string;
  refresh_token: string;
}

/**
 * A person holding `signin` on Publisher and Whitehall and `editor` only on
 * Drafts, signed in to both of the first (one browser each), with their
 * tokens; pushes so far already delivered.
 */
async function personSignedInToTwoApplications(person: Parameters<typeof createUser>[1] = {}) {
  const publisher = await createApp(signon.ctx, { name: "Publisher", redirectUris: ["https://publisher.example/auth/gds/callback"] });
  const whitehall = await createApp(signon.ctx, { name: "Whitehall", redirectUris: ["https://whitehall.example/auth/gds/callback"] });
  await createApp(signon.ctx, { name: "Drafts", redirectUris: ["https://drafts.example/auth/gds/callback"], permissions: ["editor"] });
  const user = await createUser(signon.ctx, { ...person, permissions: { Publisher: ["signin"], Whitehall: ["signin"], Drafts: ["editor"] } });
  const tokens: IssuedTokens[] = [];
  const browsers: InjectBrowser[] = [];
  for (const client of [publisher, whitehall]) {
    const { code, browser } = await obtainCode(signon.app, client, user.email);
    const issued = await exchangeCode(signon.app, client, code);
    expect(issued.statusCode).toBe(200);
    tokens.push({ client, ...issued.json<{ access_token: string; refresh_token: string }>() });
    browsers.push(browser);
  }
  await reauthsDelivered();
  receivers.received.length = 0;
  return { user, tokens, browsers };
}

/** Every old access token is refused at /user.json and every old refresh token with invalid_grant. */
async function expectAllTokensDead(tokens: IssuedTokens[]) {
  for (const { client, access_token, refresh_token } of tokens) {
    const userJson = await getUserJson(signon.app, access_token);
    expect(userJson.statusCode).toBe(401);
    expect(userJson.headers["www-authenticate"]).toContain('error="invalid_token"');
    const refreshed = await refresh(signon.app, client, refresh_token);
    expect(refreshed.statusCode).toBe(400);
    expect(refreshed.json()).toMatchObject({ error: "invalid_grant" });
  }
}

function reauthOf(user: User): string[] {
  return [`https://publisher.example/users/${user.uid}/reauth`, `https://whitehall.example/users/${user.uid}/reauth`];
}

async function isSignedIn(browser: InjectBrowser): Promise<boolean> {
  return (await browser.get("/account")).statusCode === 200;
}

/** The user's events page as an administrator sees it. */
async function eventsPageOf(user: User): Promise<string> {
  const admin = await createUser(signon.ctx, { role: "superadmin" });
  const browser = await signedInBrowser(signon.app, admin.email, defaultPassword);
  return textOf(await browser.get(`/users/${user.uid}/events`));
}

describe("POST /account/password", () => {
  it("revokes every token of the person for every application, pushes reauth once to each application with signin, and keeps only this browser signed in", async () => {
    const { user, tokens, browsers } = await personSignedInToTwoApplications();
    const [here, elsewhere] = browsers as [InjectBrowser, InjectBrowser];
    const password = strongPassword();

    const changed = await here.submit("/account/password", "/account/password", { current: defaultPassword, password, confirmation: password });

    expect(changed.statusCode).toBe(303);
    await expectAllTokensDead(tokens);
    expect(await reauthsDelivered()).toEqual(reauthOf(user));
    expect(await isSignedIn(here)).toBe(true);
    expect(await isSignedIn(elsewhere)).toBe(false);
    // The applications the event names are those the reauth went to, in the words of the suspension page (row 23).
    expect(await eventsPageOf(user)).toContain(
      "Signed out of every application after a password change: 4 tokens revoked; the applications that issued them a token were told to sign them out: Publisher, Whitehall",
    );
  });

  it("lets the person sign in to the applications again with the new password", async () => {
    const { user, tokens, browsers } = await personSignedInToTwoApplications();
    const password = strongPassword();
    await (browsers[0] as InjectBrowser).submit("/account/password", "/account/password", { current: defaultPassword, password, confirmation: password });
    const { client } = tokens[0] as IssuedTokens;
    const browser = new InjectBrowser(signon.app);
    const url = `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s" })}`;
    const signedIn = await browser.signIn(url, user.email, password);
    const code = new URL((await browser.get(signedIn.headers.location as string)).headers.location as string).searchParams.get("code") as string;
    const issued = await exchangeCode(signon.app, client, code);
    expect((await getUserJson(signon.app, issued.json<{ access_token: string }>().access_token)).statusCode).toBe(200);
  });

  it("does nothing to tokens when the current password is wrong", async () => {
    const { tokens, browsers } = await personSignedInToTwoApplications();
    const password = strongPassword();
    const refused = await (browsers[0] as InjectBrowser).submit("/account/password", "/account/password", { current: "not it", password, confirmation: password });
    expect(refused.statusCode).toBe(400);
    for (const { access_token } of tokens) expect((await getUserJson(signon.app, access_token)).statusCode).toBe(200);
    expect(await reauthsDelivered()).toEqual([]);
  });
});

describe("POST /password-reset/:token", () => {
  it("revokes every token of the person, pushes reauth once per application and ends every session", async () => {
    const { user, tokens, browsers } = await personSignedInToTwoApplications();
    await new InjectBrowser(signon.app).submit("/password-reset", "/password-reset", { email: user.email });
    const link = await linkMailedTo(signon.ctx, user.email, "/password-reset/");
    const password = strongPassword();

    const reset = await new InjectBrowser(signon.app).submit(link, link, { password, confirmation: password });

    expect(reset.statusCode).toBe(303);
    await expectAllTokensDead(tokens);
    expect(await reauthsDelivered()).toEqual(reauthOf(user));
    for (const browser of browsers) expect(await isSignedIn(browser)).toBe(false);
    expect(await eventsPageOf(user)).toContain("Signed out of every application after a password reset: 4 tokens revoked");
  });
});

describe("an e-mail address change confirmed through its link", () => {
  it("revokes every token of the person and pushes reauth once per application; this browser stays signed in", async () => {
    const { user, tokens, browsers } = await personSignedInToTwoApplications();
    const [here, elsewhere] = browsers as [InjectBrowser, InjectBrowser];

    expect((await here.submit("/account", "/account/email", { email: "new.address@example.org", current: defaultPassword })).statusCode).toBe(303);
    // Asking changes nothing yet: the tokens keep working until the new address confirms.
    for (const { access_token } of tokens) expect((await getUserJson(signon.app, access_token)).statusCode).toBe(200);
    expect(await reauthsDelivered()).toEqual([]);
    const link = await linkMailedTo(signon.ctx, "new.address@example.org", "/account/email/");

    const changed = await here.submit(link, link);

    expect(changed.statusCode).toBe(303);
    await expectAllTokensDead(tokens);
    expect(await reauthsDelivered()).toEqual(reauthOf(user));
    expect(await isSignedIn(here)).toBe(true);
    expect(await isSignedIn(elsewhere)).toBe(false);
    expect(await eventsPageOf(user)).toContain("Signed out of every application after an e-mail address change: 4 tokens revoked");
  });

  it("leaves tokens alone when only the name changes", async () => {
    const { tokens, browsers } = await personSignedInToTwoApplications();
    expect((await (browsers[0] as InjectBrowser).submit("/account", "/account/details", { name: "Someone Else" })).statusCode).toBe(303);
    for (const { access_token } of tokens) expect((await getUserJson(signon.app, access_token)).statusCode).toBe(200);
    expect(await reauthsDelivered()).toEqual([]);
    expect(await isSignedIn(browsers[1] as InjectBrowser)).toBe(true);
  });
});

describe("POST /users/:uid with a new e-mail address confirmed out of band", () => {
  it("revokes every token of the person, pushes reauth once per application and ends all their sessions", async () => {
    const { user, tokens, browsers } = await personSignedInToTwoApplications();
    const admin = await createUser(signon.ctx, { role: "superadmin" });
    const browser = await signedInBrowser(signon.app, admin.email, defaultPassword);

    const changed = await browser.submit(`/users/${user.uid}`, `/users/${user.uid}`, {
      name: user.name,
      email: "moved@example.org",
      role: "normal",
      organisation: "",
      email_confirmed_out_of_band: "yes",
    });

    expect(changed.statusCode).toBe(303);
    await expectAllTokensDead(tokens);
    expect(await reauthsDelivered()).toEqual(reauthOf(user));
    for (const signedIn of browsers) expect(await isSignedIn(signedIn)).toBe(false);
    expect(await isSignedIn(browser)).toBe(true);
  });
});

describe("POST /users/:uid/reset-two-step", () => {
  it("revokes every token of the person, pushes reauth once per application and ends all their sessions", async () => {
    const { user, tokens, browsers } = await personSignedInToTwoApplications();
    const [browser] = browsers as [InjectBrowser];
    const secret = /<p class="secret" id="secret">([A-Z2-7 ]+)<\/p>/.exec((await browser.get("/account/two-step")).body)?.[1]?.replace(/ /g, "") ?? "";
    const code = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: signon.clock.now().getTime() });
    expect((await browser.submit("/account/two-step", "/account/two-step", { code })).statusCode).toBe(303);
    const admin = await createUser(signon.ctx, { role: "superadmin" });
    const adminBrowser = await signedInBrowser(signon.app, admin.email, defaultPassword);

    const reset = await adminBrowser.submit(`/users/${user.uid}`, `/users/${user.uid}/reset-two-step`, { confirm: "yes" });

    expect(reset.statusCode).toBe(303);
    await expectAllTokensDead(tokens);
    expect(await reauthsDelivered()).toEqual(reauthOf(user));
    for (const signedIn of browsers) expect(await isSignedIn(signedIn)).toBe(false);
    expect(await eventsPageOf(user)).toContain("Signed out of every application after a 2-step verification reset: 4 tokens revoked");
  });
});

describe("an API user's pre-issued tokens", () => {
  it("keep working when its e-mail address changes; they are revoked only explicitly", async () => {
    await createApp(signon.ctx, { name: "Publisher", redirectUris: ["https://publisher.example/auth/gds/callback"] });
    const robot = await createApiUser(signon.ctx, { email: "robot@example.org", name: "Robot" });
    await grantPermissions(signon.ctx, { email: robot.email, application: "Publisher", permissions: ["signin"] });
    const { accessToken: token } = await issueOperatorToken(signon.ctx, { email: robot.email, application: "Publisher" });
    await reauthsDelivered();

    await updateUserDetails(signon.ctx, robot.email, { email: "robot.two@example.org" });

    expect((await getUserJson(signon.app, token)).statusCode).toBe(200);
    expect(await reauthsDelivered()).toEqual([]);
  });
});
