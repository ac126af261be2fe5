import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { linkFromMail } from "./support/mailbox.js";
import { password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;

const adminEmail = "ada@example.org";
const inviteeEmail = "ivan@example.org";
const inviteePassword = "Marmalade tundra kettle 58 orbit";

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_invitation"), launchBrowser()]);
  await system.createUser({ email: adminEmail, name: "Ada Admin", role: "admin" });
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

describe("inviting a user through the browser", () => {
  it("an administrator invites, and the invitee follows the mailed link, chooses a password and lands on the dashboard", async () => {
    const admin = await newPage(browser);
    await admin.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(admin, adminEmail, password);
    await admin.waitForURL(`${system.signonUrl}/`);

    await admin.getByRole("link", { name: "Users", exact: true }).click();
    await admin.getByRole("link", { name: "Invite a user" }).click();
    await admin.waitForURL(`${system.signonUrl}/users/new`);
    await admin.getByLabel("Name").fill("Ivan Invitee");
    await admin.getByLabel("E-mail address").fill(inviteeEmail);
    await admin.getByRole("button", { name: "Send invitation" }).click();
    await expect.poll(() => admin.getByRole("status").textContent()).toContain(`Invitation sent to ${inviteeEmail}`);
    await expect.poll(() => admin.getByRole("heading", { level: 1 }).textContent()).toBe("Ivan Invitee");

    const invitee = await newPage(browser);
    const link = await linkFromMail(invitee, system.signonUrl, { to: inviteeEmail, subject: "You have been invited to Tessera Sign-on" });
    await checkPage(invitee, "dev-mail-invitation");
    expect(new URL(link).pathname).toMatch(/^\/invitations\/\S+$/);

    await invitee.goto(link);
    await expect.poll(() => invitee.getByRole("heading", { level: 1 }).textContent()).toBe("Welcome, Ivan Invitee");
    await checkPage(invitee, "invitation-accept");

    // A password too short is refused next to its field.
    await invitee.getByLabel("New password", { exact: true }).fill("short");
    await invitee.getByLabel("Confirm new password").fill("short");
    await invitee.getByRole("button", { name: "Set password and sign in" }).click();
    await expect.poll(() => invitee.getByRole("alert").count()).toBeGreaterThan(0);
    await checkPage(invitee, "invitation-accept-error");

    await invitee.getByLabel("New password", { exact: true }).fill(inviteePassword);
    await invitee.getByLabel("Confirm new password").fill(inviteePassword);
    await invitee.getByRole("button", { name: "Set password and sign in" }).click();
    await invitee.waitForURL(`${system.signonUrl}/`);
    await expect.poll(() => invitee.getByRole("heading", { level: 1 }).textContent()).toBe("Your applications");
    await expect.poll(() => invitee.getByRole("status").textContent()).toContain("Your password is set");

    // The link works once.
    const again = await newPage(browser);
    await again.goto(link);
    expect(await again.getByRole("heading", { level: 1 }).textContent()).not.toBe("Welcome, Ivan Invitee");

    // And the new password signs in.
    await again.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(again, inviteeEmail, inviteePassword);
    await again.waitForURL(`${system.signonUrl}/`);
  });
});
