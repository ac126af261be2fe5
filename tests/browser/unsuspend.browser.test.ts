import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { linkFromMail } from "./support/mailbox.js";
import { password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;

const admin = "una.admin@example.org";
const email = "ulrich@example.org";
const newPassword = "Quiet marmalade lantern 77 orbit";

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_unsuspend"), launchBrowser()]);
  await system.createUser({ email: admin, name: "Una Admin", role: "superadmin" });
  await system.createUser({ email, name: "Ulrich Away", permissions: ["signin"] });
  await system.signonCli("users", "suspend", "--email", email, "--reason", "On leave");
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

describe("lifting a suspension through the browser", () => {
  it("requires a new password by default: the old one stops working and the mailed link sets a new one", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.signonUrl}/users`);
    await page.waitForURL((url) => url.pathname === "/sign-in");
    await fillSignIn(page, admin, password);
    await page.waitForURL(`${system.signonUrl}/users`);
    await page.getByRole("link", { name: "Ulrich Away" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Ulrich Away");
    expect(await page.getByRole("radio", { name: /^Yes: the old password stops working/ }).isChecked()).toBe(true);
    await checkPage(page, "user-unsuspend");
    await page.getByRole("button", { name: "Unsuspend Ulrich Away" }).click();
    await expect.poll(() => page.locator(".flash").textContent()).toContain("Their old password no longer works");
    await expect.poll(() => page.locator("#new-password-required").count()).toBe(1);

    await page.getByRole("link", { name: "Event log" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Event log of Ulrich Away");
    await expect.poll(() => page.locator("table").textContent()).toContain("a new password is required");
    await checkPage(page, "user-events");

    const person = await newPage(browser);
    await person.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(person, email, password);
    await expect.poll(() => person.getByRole("alert").textContent()).toContain("This password no longer works");

    const link = await linkFromMail(person, system.signonUrl, { to: email, subject: "Choose a new password for Tessera Sign-on" });
    await person.goto(link);
    await person.getByLabel("New password", { exact: true }).fill(newPassword);
    await person.getByLabel("Confirm new password").fill(newPassword);
    await person.getByRole("button", { name: "Set new password" }).click();
    await person.waitForURL(`${system.signonUrl}/password-reset/done`);
    await person.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(person, email, newPassword);
    await person.waitForURL(`${system.signonUrl}/`);

    // The account page's older activity: an empty page past the oldest event still has its way back.
    await person.goto(`${system.signonUrl}/account/activity?before=999999999999999`);
    await expect.poll(() => person.getByRole("heading", { level: 1 }).textContent()).toBe("Your activity");
    await checkPage(person, "account-activity");
    await person.getByRole("link", { name: "Newest activity" }).click();
    await person.waitForURL(`${system.signonUrl}/account`);
  });
});
