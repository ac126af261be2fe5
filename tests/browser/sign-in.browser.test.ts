import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { appName, password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_sign_in"), launchBrowser()]);
  await system.createUser({ email: "nora@example.org", name: "Nora Normal", permissions: ["signin"] });
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

describe("signing in through the browser", () => {
  it("shows an accessible sign-in page and then the dashboard with the applications the user may use", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.signonUrl}/sign-in`);
    await checkPage(page, "sign-in");

    await fillSignIn(page, "nora@example.org", "not the password");
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("not right");
    await checkPage(page, "sign-in-error");

    await fillSignIn(page, "nora@example.org", password);
    await page.waitForURL(`${system.signonUrl}/`);
    await expect.poll(() => page.getByRole("link", { name: appName }).count()).toBe(1);
    await checkPage(page, "dashboard");
  });

  it("signs in to the example application through Sign-on and back", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.appUrl}/`);
    expect(new URL(page.url()).origin).toBe(system.signonUrl);
    await fillSignIn(page, "nora@example.org", password);
    await page.waitForURL(`${system.appUrl}/`);
    expect(await page.textContent("body")).toContain("Nora Normal");
  });
});
