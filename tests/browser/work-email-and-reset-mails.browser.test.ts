import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { linkFromMail, mailFromMailbox } from "./support/mailbox.js";
import { password, startTestSystem, type TestSystem } from "./support/system.js";

// Sign-on as installed: SIGNON_EMAIL_DOMAINS_BLOCKED is unset, so the built-in consumer mail services are refused.
let system: TestSystem;
let browser: Browser;

const adminEmail = "ada@example.org";
const suspendedEmail = "sasha@example.org";
const inviteeEmail = "ivan@example.org";
const inviteePassword = "Quilted badger lantern 47 fjord";

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_work_email"), launchBrowser()]);
  await system.createUser({ email: adminEmail, name: "Ada Admin", role: "admin" });
  await system.createUser({ email: suspendedEmail, name: "Sasha Suspended" });
  await system.signonCli("users", "suspend", "--email", suspendedEmail, "--reason", "On leave");
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

/** Asks for a password reset from the sign-in page, as a person would; returns what the answer page says. */
async function askForReset(page: Page, email: string): Promise<{ url: string; heading: string | null; text: string }> {
  await page.goto(`${system.signonUrl}/sign-in`);
  await page.getByRole("link", { name: "Forgotten your password?" }).click();
  await page.waitForURL(`${system.signonUrl}/password-reset`);
  await page.getByLabel("E-mail address").fill(email);
  await page.getByRole("button", { name: "Send the link" }).click();
  await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Check your e-mail");
  return { url: page.url(), heading: await page.getByRole("heading", { level: 1 }).textContent(), text: await page.locator("main").innerText() };
}

describe("work addresses and the mails of a password reset, in the browser", () => {
  it("an administrator inviting a gmail.com address is told, next to the field, that it must be a work address", async () => {
    const admin = await newPage(browser);
    await admin.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(admin, adminEmail, password);
    await admin.waitForURL(`${system.signonUrl}/`);
    await admin.getByRole("link", { name: "Users", exact: true }).click();
    await admin.getByRole("link", { name: "Invite a user" }).click();
    await admin.waitForURL(`${system.signonUrl}/users/new`);

    await admin.getByLabel("Name").fill("Gail Personal");
    await admin.getByLabel("E-mail address").fill("gail@gmail.com");
    await admin.getByRole("button", { name: "Send invitation" }).click();
    const refusal = "Addresses at gmail.com, a personal e-mail service, cannot be used here: use a work e-mail address";
    await expect.poll(() => admin.locator("#email-error").textContent()).toBe(refusal);
    await expect.poll(() => admin.getByRole("alert").textContent()).toContain(refusal);
    expect(await admin.getByLabel("E-mail address").inputValue()).toBe("gail@gmail.com");
    await checkPage(admin, "invite-personal-address-refused");

    // A work address goes through from the same form.
    await admin.getByLabel("E-mail address").fill(inviteeEmail);
    await admin.getByLabel("Name").fill("Ivan Invitee");
    await admin.getByRole("button", { name: "Send invitation" }).click();
    await expect.poll(() => admin.getByRole("status").textContent()).toContain(`Invitation sent to ${inviteeEmail}`);
  });

  it("a suspended person asking for a reset sees what anyone sees, and is mailed that the account is suspended and whom to ask, with no link", async () => {
    const page = await newPage(browser);
    const forUnknown = await askForReset(page, "nobody@example.org");
    const forSuspended = await askForReset(page, suspendedEmail);
    expect(forSuspended).toEqual(forUnknown);
    await checkPage(page, "password-reset-sent-any-address");

    const mail = await mailFromMailbox(page, system.signonUrl, { to: suspendedEmail, subject: "Your Tessera Sign-on account is suspended" });
    await checkPage(page, "dev-mail-suspended-reset");
    expect(mail.text).toContain("Hello Sasha Suspended,");
    expect(mail.text).toContain("Your account is suspended, so it cannot be used to sign in and its password cannot be reset.");
    expect(mail.text).toContain("Ask one of the administrators of Tessera Sign-on to lift the suspension:\n\n  Ada Admin <ada@example.org>\n");
    expect(mail.links).toBe(0);
    expect(mail.text).not.toMatch(/https?:\/\//);
  });

  it("an invited person asking for a reset gets their invitation link again, and following it accepts the invitation", async () => {
    const page = await newPage(browser);
    const earlier = await linkFromMail(page, system.signonUrl, { to: inviteeEmail, subject: "You have been invited to Tessera Sign-on" });
    const forUnknown = await askForReset(page, "nobody@example.org");
    expect(await askForReset(page, inviteeEmail)).toEqual(forUnknown);

    const link = await linkFromMail(page, system.signonUrl, { to: inviteeEmail, subject: "Your invitation to Tessera Sign-on" });
    await checkPage(page, "dev-mail-invitation-again");
    expect(new URL(link).pathname).toMatch(/^\/invitations\/\S+$/);
    expect(link).not.toBe(earlier);

    // The link mailed before no longer works; the new one does.
    await page.goto(earlier);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("This link is not valid");
    await page.goto(link);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Welcome, Ivan Invitee");
    await page.getByLabel("New password", { exact: true }).fill(inviteePassword);
    await page.getByLabel("Confirm new password").fill(inviteePassword);
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.waitForURL(`${system.signonUrl}/`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Your applications");
  });
});
