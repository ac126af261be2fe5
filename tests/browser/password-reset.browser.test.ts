import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { linkFromMail } from "./support/mailbox.js";
import { password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;

const email = "rosa@example.org";
const newPassword = "Lantern walrus pepper 73 quarry";

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_password_reset"), launchBrowser()]);
  await system.createUser({ email, name: "Rosa Reset", permissions: ["signin"] });
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

describe("resetting a forgotten password through the browser", () => {
  it("goes from the sign-in page to a mailed link, a new password, and a sign-in with it", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.signonUrl}/sign-in`);
    await page.getByRole("link", { name: "Forgotten your password?" }).click();
    await page.waitForURL(`${system.signonUrl}/password-reset`);
    await checkPage(page, "password-reset-request");

    await page.getByLabel("E-mail address").fill(email);
    await page.getByRole("button", { name: "Send the link" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Check your e-mail");
    await checkPage(page, "password-reset-sent");

    const link = await linkFromMail(page, system.signonUrl, { to: email, subject: "Reset your Tessera Sign-on password" });
    expect(new URL(link).pathname).toMatch(/^\/password-reset\/\S+$/);
    await page.goto(link);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Choose a new password");
    await checkPage(page, "password-reset-choose");

    // The two fields must match; the mismatch is shown next to its field.
    await page.getByLabel("New password", { exact: true }).fill(newPassword);
    await page.getByLabel("Confirm new password").fill(`${newPassword}!`);
    await page.getByRole("button", { name: "Set new password" }).click();
    await expect.poll(() => page.locator("#confirmation-error").count()).toBe(1);

    await page.getByLabel("New password", { exact: true }).fill(newPassword);
    await page.getByLabel("Confirm new password").fill(newPassword);
    await page.getByRole("button", { name: "Set new password" }).click();
    await page.waitForURL(`${system.signonUrl}/password-reset/done`);
    await checkPage(page, "password-reset-done");

    await page.getByRole("link", { name: "Sign in", exact: true }).click();
    await page.waitForURL((url) => url.pathname === "/sign-in");
    await fillSignIn(page, email, password);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("not right");

    await fillSignIn(page, email, newPassword);
    await page.waitForURL(`${system.signonUrl}/`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Your applications");
  });
});
