import { signonMigrations } from "@tessera/signon";
import { signonClientMigrations } from "@tessera/signon-client/postgres";
import { useTestDatabase } from "@tessera/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort, registerEditorialApp, startShippedEditorialApp } from "./support/editorial-app.js";
import { HttpBrowser } from "./support/http-browser.js";
import { signInForm, startRealSignon, type RealSignon } from "./support/real-signon.js";

// End to end against the REAL Sign-on (@tessera/signon) on real ports: the
// application is registered and the users created with Sign-on's CLI, and a
// browser signs in through Sign-on's own sign-in form.
const database = await useTestDatabase({
  migrations: [signonMigrations, signonClientMigrations],
  label: "editorial_e2e",
});

const password = "correct horse battery staple";
let signon: RealSignon;
let app: { close(): Promise<void> } | undefined;
let appUrl: string;
let publisherToken: Record<string, unknown>;

beforeAll(async () => {
  const [signonPort, appPort] = [await freePort(), await freePort()];
  signon = await startRealSignon(database, signonPort);
  const registration = await registerEditorialApp(signon, appPort);
  await signon.cli("organisations", "create", "--slug", "cabinet-office", "--name", "Cabinet Office");
  await Promise.all([
    signon.cli("users", "create", "--email", "ed@example.org", "--name", "Ed Itor", "--password", password, "--organisation", "cabinet-office"),
    signon.cli("users", "create", "--email", "al@example.org", "--name", "Al Admin", "--password", password),
    signon.cli("users", "create", "--email", "pat@example.org", "--name", "Pat Admin", "--password", password),
    signon.cli("users", "create", "--email", "sue@example.org", "--name", "Sue Spended", "--password", password),
    signon.cli("api-users", "create", "--name", "Publisher", "--email", "publisher@example.org"),
  ]);
  await Promise.all([
    signon.cli("permissions", "grant", "--email", "ed@example.org", "--app", "Editorial", "--permissions", "signin"),
    signon.cli("permissions", "grant", "--email", "al@example.org", "--app", "Editorial", "--permissions", "signin,admin"),
    signon.cli("permissions", "grant", "--email", "pat@example.org", "--app", "Editorial", "--permissions", "signin,admin"),
    signon.cli("permissions", "grant", "--email", "sue@example.org", "--app", "Editorial", "--permissions", "signin"),
    signon.cli("permissions", "grant", "--email", "publisher@example.org", "--app", "Editorial", "--permissions", "signin"),
  ]);
  publisherToken = await signon.cli("tokens", "issue", "--email", "publisher@example.org", "--app", "Editorial");
  const started = await startShippedEditorialApp(registration, database.url, appPort);
  app = started;
  appUrl = started.url;
}, 180_000);

afterAll(async () => {
  await app?.close();
  await signon?.close();
  await database.close();
});

/** Opens `path` on the app, signs in on Sign-on's form, and returns where the browser ends up. */
async function signIn(browser: HttpBrowser, email: string, path = "/") {
  const signInPage = await browser.get(`${appUrl}${path}`);
  expect(new URL(signInPage.url).origin).toBe(signon.url);
  expect(signInPage.response.status).toBe(200);
  const form = signInForm(signInPage.body);
  return browser.postForm(`${signon.url}/sign-in`, { _csrf: form.csrf, return_to: form.returnTo, email, password });
}

describe("the editorial application with the real Sign-on", () => {
  it("signs a user in through Sign-on's form and shows who they are", async () => {
    const browser = new HttpBrowser();

    const home = await signIn(browser, "ed@example.org");

    expect(home.url).toBe(`${appUrl}/`);
    expect(home.response.status).toBe(200);
    expect(home.body).toContain(`<dd id="name">Ed Itor</dd>`);
    expect(home.body).toContain(`<dd id="email">ed@example.org</dd>`);
    expect(home.body).toContain(`<dd id="organisation">cabinet-office</dd>`);
    expect(home.body).toContain(`<ul id="permissions"><li><code>signin</code></li></ul>`);
  });

  it("keeps a user without admin out of /admin and lets an admin in", async () => {
    const editor = new HttpBrowser();
    await signIn(editor, "ed@example.org");
    const admin = new HttpBrowser();

    const adminPage = await signIn(admin, "al@example.org", "/admin");

    expect((await editor.get(`${appUrl}/admin`)).response.status).toBe(403);
    expect(adminPage.url).toBe(`${appUrl}/admin`);
    expect(adminPage.response.status).toBe(200);
    expect(adminPage.body).toContain("<td>al@example.org</td><td><code>admin</code> <code>signin</code></td><td>active</td>");
  });

  it("accepts a bearer token Sign-on issued to an API user", async () => {
    const issued = publisherToken;

    const response = await fetch(`${appUrl}/api/me`, { headers: { authorization: `Bearer ${String(issued["access_token"])}` } });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      user: expect.objectContaining({ uid: issued["uid"], email: "publisher@example.org", permissions: ["signin"] }) as unknown,
    });
  });

  it("signs out here; the next visit goes through Sign-on again, which still knows the browser", async () => {
    const browser = new HttpBrowser();
    await signIn(browser, "ed@example.org");

    const out = await browser.get(`${appUrl}/auth/gds/sign_out`);
    browser.visited.length = 0;
    const again = await browser.get(`${appUrl}/`);

    expect(out.url).toBe(`${signon.url}/`);
    expect(out.body).toContain("Ed Itor");
    expect(browser.visited.map((url) => new URL(url).pathname)).toEqual([
      "/",
      "/auth/gds",
      "/oauth/authorize",
      "/auth/gds/callback",
      "/",
    ]);
    expect(again.body).toContain(`<dd id="name">Ed Itor</dd>`);
  });

  it("takes a permission away when Sign-on pushes the change (PUT /auth/gds/api/users/:uid)", async () => {
    const browser = new HttpBrowser();
    expect((await signIn(browser, "pat@example.org", "/admin")).response.status).toBe(200);

    await signon.cli("permissions", "revoke", "--email", "pat@example.org", "--app", "Editorial", "--permissions", "admin");

    await vi.waitFor(async () => expect((await browser.get(`${appUrl}/admin`)).response.status).toBe(403), {
      timeout: 20_000,
      interval: 100,
    });
  }, 30_000);

  it("signs a suspended user out when Sign-on pushes the reauth (POST /auth/gds/api/users/:uid/reauth)", async () => {
    const browser = new HttpBrowser();
    expect((await signIn(browser, "sue@example.org")).body).toContain("Sue Spended");

    await signon.cli("users", "suspend", "--email", "sue@example.org", "--reason", "Left the department");

    await vi.waitFor(
      async () => {
        const next = await browser.get(`${appUrl}/`);
        expect(`${new URL(next.url).origin}${new URL(next.url).pathname}`).toBe(`${signon.url}/sign-in`);
      },
      { timeout: 20_000, interval: 100 },
    );
  }, 30_000);
});
