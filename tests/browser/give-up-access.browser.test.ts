import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { appName, password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;

const email = "gia@example.org";

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_give_up_access"), launchBrowser()]);
  await system.createUser({ email, name: "Gia Leaving", permissions: ["signin", "editor"] });
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

describe("giving up your own access through the browser", () => {
  it("asks first, then removes the permissions, and the example application signs the person out", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.appUrl}/`);
    await fillSignIn(page, email, password);
    await page.waitForURL(`${system.appUrl}/`);
    expect(await page.locator("#permissions li").allTextContents()).toEqual(expect.arrayContaining(["signin", "editor"]));

    await page.goto(`${system.signonUrl}/account`);
    await checkPage(page, "account-applications");
    await page.getByRole("link", { name: `Give up access to ${appName}` }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe(`Give up your access to ${appName}`);
    expect(await page.getByRole("list", { name: "What will happen" }).textContent()).toContain(`Your permissions on ${appName} are removed: editor, signin.`);
    await checkPage(page, "account-give-up-access-confirmation");

    // Cancel changes nothing.
    await page.getByRole("link", { name: "Cancel: back to your account" }).click();
    await page.waitForURL(`${system.signonUrl}/account`);
    await page.getByRole("link", { name: `Give up access to ${appName}` }).click();
    await page.getByRole("button", { name: `Give up access to ${appName}` }).click();
    await page.waitForURL(`${system.signonUrl}/account`);
    await expect.poll(() => page.locator(".flash").textContent()).toContain(`You no longer have access to ${appName}.`);
    await expect.poll(() => page.getByText("You have no permissions on any application.").count()).toBe(1);
    await checkPage(page, "account-after-giving-up-access");

    // The push tells the application: its session ends, and Sign-on no longer lets the person in.
    await expect
      .poll(
        async () => {
          await page.goto(`${system.appUrl}/`);
          return new URL(page.url()).origin;
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBe(system.signonUrl);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toContain(appName);
  });
});
