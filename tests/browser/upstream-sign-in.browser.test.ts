// Sign-in through an organisation's own OpenID Connect provider (node-oidc-provider, with its own keys and login
// page), in Chromium against the built Sign-on and the example application: a superadmin connects the organisation on
// its page, a person of it reaches the application through the provider, signing out at the provider signs them out
// of Sign-on and the application (back-channel logout, then a push), a leaver the provider refuses is refused, and a
// break-glass account still signs in with its password.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { appName, password, startTestSystem, type TestSystem } from "./support/system.js";
import { startUpstreamProvider, type UpstreamProvider } from "./support/upstream-provider.js";

let system: TestSystem;
let browser: Browser;
let upstream: UpstreamProvider;
let admin: Page;
let providerPage: string;
const domain = "dept.example.org";
const uma = `uma@${domain}`;
const leaver = `lee@${domain}`;
const breakGlass = `glass@${domain}`;

beforeAll(async () => {
  [system, browser, upstream] = await Promise.all([startTestSystem("browser_upstream"), launchBrowser(), startUpstreamProvider()]);
  await system.signonCli("organisations", "create", "--slug", "dept", "--name", "Department of Examples");
  await system.signonCli("users", "create", "--email", "sam@example.org", "--name", "Sam Superadmin", "--role", "superadmin", "--password", password);
  for (const [email, name] of [[uma, "Uma Upstream"], [leaver, "Lee Leaver"], [breakGlass, "Break Glass"]] as const) {
    await system.signonCli("users", "create", "--email", email, "--name", name, "--organisation", "dept", ...(email === breakGlass ? ["--password", password] : []));
    await system.signonCli("permissions", "grant", "--email", email, "--app", appName, "--permissions", "signin");
  }
  upstream.people.set(uma, { name: "Uma Upstream" });
  upstream.people.set(leaver, { name: "Lee Leaver", disabled: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await upstream?.close();
  await system?.close();
});

/** Types the address on Sign-on's page (no password) and signs in on the provider's development pages. */
async function signInAtProvider(page: Page, email: string): Promise<void> {
  await page.waitForURL((url) => url.pathname === "/sign-in");
  await page.getByLabel("E-mail address").fill(email);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL((url) => url.origin === upstream.issuer);
  await page.locator('input[name="login"]').fill(email);
  await page.locator('input[name="password"]').fill("anything");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
}

describe("an organisation's own identity provider, in Chromium", () => {
  it("a superadmin connects the organisation on its page", async () => {
    admin = await newPage(browser);
    const page = admin;
    await page.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(page, "sam@example.org", password);
    await page.waitForURL(`${system.signonUrl}/`);
    await page.goto(`${system.signonUrl}/organisations`);
    await page.getByRole("link", { name: "Department of Examples" }).click();
    await page.getByRole("link", { name: "Connect its identity provider" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Identity provider of Department of Examples");
    providerPage = page.url();
    await checkPage(page, "identity-provider-new");
    await page.getByLabel("Issuer").fill(upstream.issuer);
    await page.getByLabel("Client id").fill(upstream.clientId);
    await page.getByLabel("Client secret", { exact: true }).fill(upstream.clientSecret);
    await page.getByLabel("E-mail domains").fill(domain);
    await page.getByLabel("Addresses that keep a Sign-on password").fill(breakGlass);
    await page.getByRole("button", { name: "Connect" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("is connected to its identity provider");
    const redirectUri = await page.locator("dt:text('Redirect URI') + dd code").textContent();
    const backchannelLogoutUri = await page.locator("dt:text('Back-channel logout URI') + dd code").textContent();
    expect(redirectUri).toBe(`${system.signonUrl}/sign-in/upstream/callback`);
    expect(backchannelLogoutUri).toMatch(new RegExp(`^${system.signonUrl}/sign-in/upstream/[0-9a-f-]{36}/backchannel-logout$`));
    await checkPage(page, "identity-provider-connected");
    upstream.serve({ redirectUri: redirectUri!, backchannelLogoutUri: backchannelLogoutUri! });
  });

  it("a person of the organisation reaches the application through the provider; signing out there signs them out of both", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.appUrl}/`);
    await signInAtProvider(page, uma);
    await page.waitForURL(`${system.appUrl}/`);
    expect(await page.locator("#permissions li").allTextContents()).toEqual(["signin"]);

    // At the provider's end-session page: it tells Sign-on (back-channel logout), which tells the application (a push).
    await page.goto(`${upstream.issuer}/session/end`);
    await page.getByRole("button", { name: "Yes, sign me out" }).click();
    await expect.poll(() => upstream.logouts, { timeout: 10_000 }).toEqual([{ ok: true, detail: "" }]);
    await expect
      .poll(
        async () => {
          await page.goto(`${system.appUrl}/`);
          return new URL(page.url()).origin;
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBe(system.signonUrl);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
  });

  it("a leaver the provider refuses is told so, and the administrators can read why", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.appUrl}/`);
    await page.waitForURL((url) => url.pathname === "/sign-in");
    await page.getByLabel("E-mail address").fill(leaver);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    // The provider answers at once: it knows the address as disabled.
    await page.waitForURL((url) => url.origin === system.signonUrl && url.pathname === "/sign-in/upstream/callback");
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("You are not signed in");
    expect(await page.getByRole("alert").textContent()).toContain("did not sign you in");
    await checkPage(page, "upstream-refused");
    await admin.goto(providerPage);
    const latest = admin.getByRole("table").locator("tbody tr").first();
    expect(await latest.textContent()).toContain("Sign-in through the organisation's identity provider refused: Lee Leaver");
    expect(await latest.textContent()).toContain("the provider answered access_denied: The account is disabled");
    await checkPage(admin, "identity-provider-events");
  });

  it("a break-glass account of the organisation still signs in with its password", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.appUrl}/`);
    await page.waitForURL((url) => url.pathname === "/sign-in");
    await fillSignIn(page, breakGlass, password);
    await page.waitForURL(`${system.appUrl}/`);
    expect(await page.locator("#permissions li").allTextContents()).toEqual(["signin"]);
  });
});
