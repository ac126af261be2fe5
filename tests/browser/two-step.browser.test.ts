import { Secret, TOTP } from "otpauth";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;

const email = "tomas@example.org";

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_two_step"), launchBrowser()]);
  await system.createUser({ email, name: "Tomas Two-Step", permissions: ["signin"] });
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

/** The code an authenticator app holding `secret` shows `offsetSeconds` from now. */
function codeFor(secret: string, offsetSeconds = 0): string {
  const totp = new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) });
  return totp.generate({ timestamp: Date.now() + offsetSeconds * 1000 });
}

/** A six-digit code that is not `code`. */
function wrongCode(code: string): string {
  return String((Number(code) + 500_000) % 1_000_000).padStart(6, "0");
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await page.waitForURL((url) => url.pathname === "/sign-in");
}

describe("2-step verification in the browser", () => {
  it("is set up from the account, asked for at sign-in, and skipped on a remembered browser", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(page, email, password);
    await page.waitForURL(`${system.signonUrl}/`);

    await page.getByRole("link", { name: "Your account" }).click();
    await page.getByRole("link", { name: "manage" }).click();
    await page.waitForURL(`${system.signonUrl}/account/two-step`);
    await checkPage(page, "two-step-set-up");

    // The key as a person would type it into their app: groups separated by spaces.
    const secret = ((await page.locator("#secret").textContent()) ?? "").replace(/\s/g, "");
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);

    await page.getByLabel("Enter the 6-digit code the app shows").fill(wrongCode(codeFor(secret)));
    await page.getByRole("button", { name: "Turn on 2-step verification" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBeTruthy();
    await checkPage(page, "two-step-set-up-error");

    await page.getByLabel("Enter the 6-digit code the app shows").fill(codeFor(secret));
    await page.getByRole("button", { name: "Turn on 2-step verification" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("2-step verification is on");
    await checkPage(page, "two-step-enabled");

    await signOut(page);
    await fillSignIn(page, email, password);
    await page.waitForURL((url) => url.pathname === "/sign-in/two-step");
    await checkPage(page, "two-step-code");
    // The set-up used the current step's code, and each step counts once: the next step's code is the one to use.
    await page.getByLabel("Code from your authenticator app").fill(codeFor(secret, 30));
    await page.getByLabel("Remember this browser for 30 days").check();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL(`${system.signonUrl}/`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Your applications");

    await signOut(page);
    await fillSignIn(page, email, password);
    await page.waitForURL(`${system.signonUrl}/`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Your applications");
  });

  it("asks a browser that was not remembered for the code", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(page, email, password);
    await page.waitForURL((url) => url.pathname === "/sign-in/two-step");
    await page.goto(`${system.signonUrl}/account`);
    expect(new URL(page.url()).pathname).not.toBe("/account");
  });
});
