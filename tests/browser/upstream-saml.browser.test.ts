// Sign-in through an organisation's SAML 2.0 identity provider, in Chromium against the built Sign-on and the example
// application: a superadmin connects the organisation from the IdP's metadata on its page, a person of it reaches the
// application through the IdP (its page posts the signed answer back, as an IdP's does), and the IdP's signed single
// logout request signs them out of Sign-on and the application.
import { startSamlIdentityProvider, type ScriptedSamlProvider } from "@tessera/test-support/saml-identity-provider";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { appName, password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;
let idp: ScriptedSamlProvider;
let sloUrl: string;
const domain = "agency.example.org";
const rae = `rae@${domain}`;

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_saml"), launchBrowser()]);
  idp = await startSamlIdentityProvider(`${system.signonUrl}/sign-in/upstream/saml/metadata`);
  await system.signonCli("organisations", "create", "--slug", "agency", "--name", "Agency of Examples");
  await system.signonCli("users", "create", "--email", "sam@example.org", "--name", "Sam Superadmin", "--role", "superadmin", "--password", password);
  await system.signonCli("users", "create", "--email", rae, "--name", "Rae Upstream", "--organisation", "agency");
  await system.signonCli("permissions", "grant", "--email", rae, "--app", appName, "--permissions", "signin");
  idp.person = { nameId: "rae-persistent-id", email: rae, name: "Rae Upstream", sessionIndex: "_idp-session-rae" };
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await idp?.close();
  await system?.close();
});

describe("an organisation's SAML identity provider, in Chromium", () => {
  it("a superadmin connects the organisation from the IdP's metadata", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(page, "sam@example.org", password);
    await page.waitForURL(`${system.signonUrl}/`);
    await page.goto(`${system.signonUrl}/organisations`);
    await page.getByRole("link", { name: "Agency of Examples" }).click();
    await page.getByRole("link", { name: "Connect its identity provider" }).click();
    await page.getByLabel("SAML 2.0").check();
    await page.getByLabel("The identity provider's metadata (XML)").fill(idp.metadata);
    await page.getByLabel("E-mail domains").fill(domain);
    await page.getByRole("button", { name: "Connect" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("is connected to its identity provider");
    expect(await page.locator("main").textContent()).toContain(`sign in through ${idp.entityId} (SAML 2.0)`);
    sloUrl = (await page.locator("dt:text('SAML: single logout service') + dd code").textContent())!;
    expect(sloUrl).toMatch(new RegExp(`^${system.signonUrl}/sign-in/upstream/[0-9a-f-]{36}/saml/logout$`));
    await checkPage(page, "identity-provider-saml");
  });

  let person: Page;
  it("a person of the organisation reaches the application through the IdP", async () => {
    person = await newPage(browser);
    await person.goto(`${system.appUrl}/`);
    await person.waitForURL((url) => url.pathname === "/sign-in");
    await person.getByLabel("E-mail address").fill(rae);
    await person.getByRole("button", { name: "Sign in", exact: true }).click();
    // The IdP's page posts the signed answer to Sign-on at once; Sign-on then goes on to the application.
    await person.waitForURL(`${system.appUrl}/`);
    expect(await person.locator("#permissions li").allTextContents()).toEqual(["signin"]);
  });

  it("the IdP's single logout signs them out of Sign-on and the application", async () => {
    await person.goto(idp.logoutUrl(sloUrl, "rae-persistent-id", { sessionIndex: "_idp-session-rae" }));
    await person.waitForURL((url) => url.origin === new URL(idp.signOnUrl).origin && url.pathname === "/slo");
    await expect
      .poll(
        async () => {
          await person.goto(`${system.appUrl}/`);
          return new URL(person.url()).origin;
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBe(system.signonUrl);
    expect(new URL(person.url()).pathname).toBe("/sign-in");
  });
});
