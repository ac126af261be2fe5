import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { linkFromMail } from "./support/mailbox.js";
import { password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;

const email = "edith@example.org";
const newEmail = "edith.new@example.org";

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_email_change"), launchBrowser()]);
  await system.createUser({ email, name: "Edith Change", permissions: ["signin"] });
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

describe("changing your own e-mail address through the browser", () => {
  it("asks for the password, mails a link to the new address, tells the old one, and changes only when the link is confirmed", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.signonUrl}/account`);
    await page.waitForURL((url) => url.pathname === "/sign-in");
    await fillSignIn(page, email, password);
    await page.waitForURL(`${system.signonUrl}/account`);

    // A wrong password is refused next to its field.
    await page.getByLabel("New e-mail address").fill(newEmail);
    await page.getByLabel("Current password").fill("not the password");
    await page.getByRole("button", { name: "Send confirmation link" }).click();
    await expect.poll(() => page.locator("#current-error").textContent()).toBe("Your current password is not right");

    await page.getByLabel("Current password").fill(password);
    await page.getByRole("button", { name: "Send confirmation link" }).click();
    await expect.poll(() => page.locator(".flash").textContent()).toContain(`We have sent a confirmation link to ${newEmail}`);
    await expect.poll(() => page.locator("#pending-email").textContent()).toContain(newEmail);
    await checkPage(page, "account-email-pending");

    // The old address is told, without the link.
    await page.goto(`${system.signonUrl}/dev/mail`);
    const notice = page
      .locator("article")
      .filter({ has: page.getByRole("heading", { name: "Your Tessera Sign-on e-mail address is about to change", exact: true }) })
      .filter({ hasText: `To ${email},` });
    await expect.poll(() => notice.count()).toBe(1);
    expect(await notice.locator("pre").textContent()).not.toContain("/account/email/");

    const link = await linkFromMail(page, system.signonUrl, { to: newEmail, subject: "Confirm your new e-mail address for Tessera Sign-on" });
    expect(new URL(link).pathname).toMatch(/^\/account\/email\/[0-9a-f]{64}$/);
    await page.goto(link);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Confirm your new e-mail address");
    await checkPage(page, "account-email-confirm");
    await page.getByRole("button", { name: "Change my e-mail address" }).click();
    await page.waitForURL(`${system.signonUrl}/account`);
    await expect.poll(() => page.locator(".flash").textContent()).toContain(`Your e-mail address is now ${newEmail}.`);
    await expect.poll(() => page.locator("#pending-email").count()).toBe(0);

    // The link worked once; the new address signs in.
    await page.goto(link);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("This link has already been used");
    await page.goto(`${system.signonUrl}/account`);
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.waitForURL((url) => url.pathname === "/sign-in");
    await fillSignIn(page, newEmail, password);
    await page.waitForURL(`${system.signonUrl}/`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Your applications");
  });
});
