import { Secret, TOTP } from "otpauth";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;

const email = "amal@example.org";

beforeAll(async () => {
  // The installation's default: superadmins and admins must use 2-step verification.
  [system, browser] = await Promise.all([startTestSystem("browser_two_step_mandate", { twoStepRequiredRoles: "superadmin,admin" }), launchBrowser()]);
  await system.createUser({ email, name: "Amal Admin", role: "admin", permissions: ["signin"] });
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

function codeFor(secret: string): string {
  return new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate();
}

describe("2-step verification required of an admin", () => {
  it("sends an admin without it to set it up after signing in, lets them do nothing else, then takes them where they were going", async () => {
    const page = await newPage(browser);
    // Signing in to the example application: Sign-on's form, then the set-up instead of the application.
    await page.goto(`${system.appUrl}/`);
    expect(new URL(page.url()).origin).toBe(system.signonUrl);
    await fillSignIn(page, email, password);
    await page.waitForURL((url) => url.origin === system.signonUrl && url.pathname === "/account/two-step");
    const setUpUrl = page.url();
    expect(new URL(setUpUrl).searchParams.get("return_to")).toMatch(/^\/oauth\/authorize\?/);
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Your account must use 2-step verification.");
    expect(await page.getByRole("navigation", { name: "Main" }).count()).toBe(0);
    await expect.poll(() => page.getByRole("button", { name: "Sign out", exact: true }).count()).toBe(1);
    await checkPage(page, "two-step-required");

    // No way round it: Sign-on's pages and the example application come back here.
    for (const path of ["/", "/users", "/account"]) {
      await page.goto(`${system.signonUrl}${path}`);
      expect(new URL(page.url()).pathname, path).toBe("/account/two-step");
      expect(new URL(page.url()).searchParams.get("return_to"), path).toBe(path);
    }
    await page.goto(`${system.appUrl}/`);
    expect(new URL(page.url()).pathname).toBe("/account/two-step");

    const secret = ((await page.locator("#secret").textContent()) ?? "").replace(/\s/g, "");
    await page.getByLabel("Enter the 6-digit code the app shows").fill(codeFor(secret));
    await page.getByRole("button", { name: "Turn on 2-step verification" }).click();
    // Back through the authorization it interrupted, into the example application.
    await page.waitForURL(`${system.appUrl}/`);
    expect(await page.locator("#email").textContent()).toBe(email);

    await page.goto(`${system.signonUrl}/users`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Users");
    await expect.poll(() => page.getByRole("navigation", { name: "Main" }).count()).toBe(1);
    await page.getByLabel("2-step verification", { exact: true }).selectOption("missing");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL((url) => url.searchParams.get("two_step") === "missing");
    await checkPage(page, "users-two-step-filter");
  });
});
