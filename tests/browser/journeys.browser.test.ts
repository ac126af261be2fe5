// What a new installation's people do, in Chromium, against the system as shipped: `npm start` in an
// empty directory (the built services, the embedded database), then the superadmin it prints, the
// people they invite, the example application and an API client, each step asserting what the person
// sees. Nothing here reaches into the database or the sources: every change goes through a page, a
// mailed link or the HTTP API, as it would for them.
import { chmod, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeDataFolder } from "@tessera/db/testing";
import { freePort, runStart, type StartRun } from "@tessera/test-support";
import { Secret, TOTP } from "otpauth";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { linkFromMail } from "./support/mailbox.js";

const exampleApp = "Editorial app";
const organisation = { name: "Periodicals Desk", slug: "periodicals-desk" };
const invitee = { name: "Ines Ortega", email: "ines@example.org", password: "Lantern orchard 47 quietly", newEmail: "ines.ortega@example.org" };
const passwords = { afterReset: "Copper meadow 19 harbour tides", afterChange: "Velvet glacier 83 morning trains" };
const batch = [
  { name: "Bao Tran", email: "bao@example.org", password: "Maple circuit 52 drifting owls" },
  { name: "Chiara Russo", email: "chiara@example.org", password: "Saffron tunnel 61 patient crows" },
  { name: "Dmitri Volkov", email: "dmitri@example.org", password: "Granite kettle 34 wandering bees" },
];

let scratch: string;
let run: StartRun;
let browser: Browser;
let admin: Page;
let signonUrl: string;
let appUrl: string;
let completionUrl: string;
let firstStart: { email: string; password: string; apiToken: string };

function codeFor(secret: string): string {
  return new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate();
}

async function heading(page: Page): Promise<string | null> {
  return page.getByRole("heading", { level: 1 }).textContent();
}

/** The permissions the example application lists for whoever is signed in there, reloading its home page. */
async function permissionsInApp(page: Page): Promise<string[]> {
  await page.goto(`${appUrl}/`);
  if (new URL(page.url()).origin !== appUrl) return [];
  return (await page.locator("#permissions li").allTextContents()).sort();
}

async function openUserPage(page: Page, name: string): Promise<void> {
  await page.goto(`${signonUrl}/users`);
  await page.getByRole("searchbox", { name: "Name or e-mail" }).fill(name);
  await page.getByRole("button", { name: "Filter" }).click();
  await page.getByRole("link", { name, exact: true }).click();
  await expect.poll(() => heading(page)).toBe(name);
}

/** Follows the invitation mailed to `person`, chooses their password and lands on Sign-on's dashboard. */
async function acceptInvitation(page: Page, person: { name: string; email: string; password: string }): Promise<void> {
  const link = await linkFromMail(page, signonUrl, { to: person.email, subject: "You have been invited to Tessera Sign-on" });
  await page.goto(link);
  await expect.poll(() => heading(page)).toBe(`Welcome, ${person.name}`);
  await page.getByLabel("New password", { exact: true }).fill(person.password);
  await page.getByLabel("Confirm new password").fill(person.password);
  await page.getByRole("button", { name: "Set password and sign in" }).click();
  await page.waitForURL(`${signonUrl}/`);
  await expect.poll(() => heading(page)).toBe("Your applications");
}

/** Opens the example application as a person signed in to Sign-on: through Sign-on and back, to their page there. */
async function openExampleApp(page: Page, email: string): Promise<void> {
  await page.goto(`${appUrl}/`);
  await page.waitForURL(`${appUrl}/`);
  await expect.poll(() => page.locator("#email").textContent()).toBe(email);
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "tessera-journeys-"));
  // Run by root, the embedded PostgreSQL server runs as the account "postgres", which must be let through.
  await chmod(scratch, 0o711);
  const ports = new Set<number>();
  while (ports.size < 3) ports.add(await freePort());
  const [signonPort, completionPort, examplePort] = [...ports] as [number, number, number];
  run = runStart(scratch, { SIGNON_PORT: String(signonPort), COMPLETION_PORT: String(completionPort), EDITORIAL_APP_PORT: String(examplePort) });
  const [printed, launched] = await Promise.all([run.printed("Press Ctrl-C to stop."), launchBrowser()]);
  browser = launched;
  signonUrl = `http://localhost:${signonPort}`;
  appUrl = `http://127.0.0.1:${examplePort}`;
  completionUrl = `http://127.0.0.1:${completionPort}`;
  firstStart = {
    email: /Superadmin +(\S+)/.exec(printed)?.[1] ?? "",
    password: /Password +(\S+)/.exec(printed)?.[1] ?? "",
    apiToken: /API token +([0-9a-f]+)/.exec(printed)?.[1] ?? "",
  };
  admin = await newPage(browser);
});

afterAll(async () => {
  await browser?.close();
  if (run && run.child.exitCode === null) {
    run.child.kill("SIGINT");
    await run.exited;
  }
  if (scratch) await removeDataFolder(scratch);
});

describe("a new installation, as its people use it", () => {
  it("prints where to go and how to sign in: a superadmin and an API token, once", () => {
    expect(firstStart.email).toBe("admin@example.com");
    expect(firstStart.password.length).toBeGreaterThanOrEqual(20);
    expect(firstStart.apiToken).toMatch(/^[0-9a-f]{64}$/);
    expect(run.output()).toContain(`Sign-on      ${signonUrl}`);
  });

  it("the superadmin signs in and sets up 2-step verification, as superadmins must", async () => {
    await admin.goto(`${signonUrl}/sign-in`);
    await fillSignIn(admin, firstStart.email, firstStart.password);
    await admin.waitForURL((url) => url.pathname === "/account/two-step");
    await expect.poll(() => admin.getByRole("status").textContent()).toContain("Your account must use 2-step verification.");
    const secret = ((await admin.locator("#secret").textContent()) ?? "").replace(/\s/g, "");
    await admin.getByLabel("Enter the 6-digit code the app shows").fill(codeFor(secret));
    await admin.getByRole("button", { name: "Turn on 2-step verification" }).click();
    await admin.waitForURL((url) => url.origin === signonUrl && url.pathname === "/");
    await expect.poll(() => admin.getByRole("navigation", { name: "Main" }).count()).toBe(1);
    // The set-up's answer was a redirect: reloading shows the dashboard, not the set-up again.
    await admin.reload();
    expect(new URL(admin.url()).pathname).toBe("/");
  });

  it("creates an organisation and invites a person into it with a role and permissions", async () => {
    await admin.goto(`${signonUrl}/organisations/new`);
    await admin.getByLabel("Name").fill(organisation.name);
    await admin.getByLabel("Slug").fill(organisation.slug);
    await admin.getByRole("button", { name: "Create organisation" }).click();
    await expect.poll(() => admin.locator(".flash").textContent()).toContain(organisation.name);

    await admin.goto(`${signonUrl}/users/new`);
    await admin.getByLabel("Name").fill(invitee.name);
    await admin.getByLabel("E-mail address").fill(invitee.email);
    await admin.getByLabel("Role").selectOption("organisation_admin");
    await admin.getByLabel("Organisation").selectOption({ label: organisation.name });
    const grid = admin.getByRole("group", { name: exampleApp });
    await grid.getByLabel("signin", { exact: true }).check();
    await grid.getByLabel("editor", { exact: true }).check();
    await admin.getByRole("button", { name: "Send invitation" }).click();
    await expect.poll(() => admin.getByRole("status").textContent()).toContain(`Invitation sent to ${invitee.email}`);
    await expect.poll(() => heading(admin)).toBe(invitee.name);
    await expect.poll(() => admin.locator("dl.summary").textContent()).toContain(organisation.name);
  });

  let person: Page;

  it("the invitee accepts, sets a password, and signs in to the example application with the permissions chosen", async () => {
    person = await newPage(browser);
    await acceptInvitation(person, invitee);
    await expect.poll(() => person.getByRole("link", { name: exampleApp }).count()).toBe(1);
    await openExampleApp(person, invitee.email);
    expect(await permissionsInApp(person)).toEqual(["editor", "signin"]);
    await checkPage(person, "journey-example-app");
  });

  it("an administrator grants and revokes a permission, and the push reaches the example application", async () => {
    await openUserPage(admin, invitee.name);
    await admin.getByRole("link", { name: "Permissions", exact: true }).click();
    const grid = admin.getByRole("group", { name: exampleApp });
    await grid.getByLabel("admin", { exact: true }).check();
    await grid.getByLabel("editor", { exact: true }).uncheck();
    await admin.getByRole("button", { name: "Save permissions" }).click();
    await expect.poll(() => admin.getByRole("status").count()).toBe(1);

    await expect.poll(() => permissionsInApp(person), { timeout: 15_000, interval: 250 }).toEqual(["admin", "signin"]);
  });

  it("the person resets a forgotten password through the mailed link", async () => {
    const page = await newPage(browser);
    await page.goto(`${signonUrl}/sign-in`);
    await page.getByRole("link", { name: "Forgotten your password?" }).click();
    await page.getByLabel("E-mail address").fill(invitee.email);
    await page.getByRole("button", { name: "Send the link" }).click();
    await expect.poll(() => heading(page)).toBe("Check your e-mail");
    const link = await linkFromMail(page, signonUrl, { to: invitee.email, subject: "Reset your Tessera Sign-on password" });
    await page.goto(link);
    await page.getByLabel("New password", { exact: true }).fill(passwords.afterReset);
    await page.getByLabel("Confirm new password").fill(passwords.afterReset);
    await page.getByRole("button", { name: "Set new password" }).click();
    await page.waitForURL(`${signonUrl}/password-reset/done`);
    await page.goto(`${signonUrl}/sign-in`);
    await fillSignIn(page, invitee.email, passwords.afterReset);
    await page.waitForURL(`${signonUrl}/`);
    person = page;
  });

  it("the person changes their password on their account page", async () => {
    await person.goto(`${signonUrl}/account/password`);
    await person.getByLabel("Current password").fill(passwords.afterReset);
    await person.getByLabel("New password", { exact: true }).fill(passwords.afterChange);
    await person.getByLabel("Confirm new password").fill(passwords.afterChange);
    await person.getByRole("button", { name: "Change password" }).click();
    await expect.poll(() => person.locator(".flash").textContent()).toContain("password");

    const again = await newPage(browser);
    await again.goto(`${signonUrl}/sign-in`);
    await fillSignIn(again, invitee.email, passwords.afterReset);
    await expect.poll(() => again.getByRole("alert").textContent()).toContain("not right");
    await fillSignIn(again, invitee.email, passwords.afterChange);
    await again.waitForURL(`${signonUrl}/`);
    person = again;
  });

  it("the person changes their e-mail address through a link mailed to the new one", async () => {
    await person.goto(`${signonUrl}/account`);
    await person.getByLabel("New e-mail address").fill(invitee.newEmail);
    await person.getByLabel("Current password").fill(passwords.afterChange);
    await person.getByRole("button", { name: "Send confirmation link" }).click();
    await expect.poll(() => person.locator(".flash").textContent()).toContain(`We have sent a confirmation link to ${invitee.newEmail}`);
    const link = await linkFromMail(person, signonUrl, { to: invitee.newEmail, subject: "Confirm your new e-mail address for Tessera Sign-on" });
    await person.goto(link);
    await person.getByRole("button", { name: "Change my e-mail address" }).click();
    await person.waitForURL(`${signonUrl}/account`);
    await expect.poll(() => person.locator(".flash").textContent()).toContain(`Your e-mail address is now ${invitee.newEmail}.`);
    // The example application hears of it: its page shows the new address.
    await expect.poll(async () => {
      await person.goto(`${appUrl}/`);
      return person.locator("#email").textContent();
    }, { timeout: 15_000, interval: 250 }).toBe(invitee.newEmail);
  });

  it("an administrator invites three people from a CSV file, and each of them signs in to the example application", async () => {
    await admin.goto(`${signonUrl}/users/invite-batch`);
    const csv = ["Name,Email", ...batch.map((one) => `${one.name},${one.email}`)].join("\n");
    await admin.getByLabel("CSV file").setInputFiles({ name: "people.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    const grid = admin.getByRole("group", { name: exampleApp });
    await grid.getByLabel("signin", { exact: true }).check();
    await admin.getByRole("button", { name: "Send invitations" }).click();
    await admin.waitForURL(/\/users\/invite-batch\/[0-9a-f-]{36}$/);
    await expect.poll(() => admin.locator("#batch-status").textContent(), { timeout: 20_000, interval: 250 }).toContain("Finished");
    const outcomes = await admin.locator("#batch-rows tbody tr td:nth-child(4)").allTextContents();
    expect(outcomes.map((outcome) => outcome.trim())).toEqual(["Invited", "Invited", "Invited"]);

    for (const one of batch) {
      const page = await newPage(browser);
      await acceptInvitation(page, one);
      await openExampleApp(page, one.email);
      expect(await permissionsInApp(page)).toEqual(["signin"]);
    }
  });

  it("suspending a person signs them out of the example application; unsuspending lets them back in", async () => {
    await openUserPage(admin, invitee.name);
    await admin.getByRole("button", { name: `Suspend ${invitee.name}` }).click();
    await admin.getByLabel("Reason for the suspension").fill("On leave");
    await admin.getByRole("button", { name: `Suspend ${invitee.name}` }).click();
    await expect.poll(() => admin.locator("dl.summary").textContent()).toContain("On leave");
    await expect
      .poll(
        async () => {
          await person.goto(`${appUrl}/`);
          return new URL(person.url()).origin;
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBe(signonUrl);

    await admin.getByLabel("No: they sign in with their old password").check();
    await admin.getByRole("button", { name: `Unsuspend ${invitee.name}` }).click();
    await expect.poll(() => admin.locator(".flash").textContent()).toContain(`${invitee.name} is no longer suspended`);
    await person.goto(`${signonUrl}/sign-in`);
    await fillSignIn(person, invitee.newEmail, passwords.afterChange);
    await person.waitForURL(`${signonUrl}/`);
    await openExampleApp(person, invitee.newEmail);
  });

  it("an API user gets a token on Completion, which reads with it, and the token is refused by the example application", async () => {
    await admin.goto(`${signonUrl}/api-users/new`);
    await admin.getByLabel("Name").fill("Reporting robot");
    await admin.getByLabel("E-mail address").fill("reporting-robot@example.org");
    await admin.getByRole("button", { name: "Create API user" }).click();
    await expect.poll(() => heading(admin)).toBe("Reporting robot");
    const completionOption = admin.locator("#application_id option", { hasText: /^completion \(/ });
    await admin.getByLabel("Application", { exact: true }).selectOption((await completionOption.getAttribute("value")) ?? "");
    await admin.getByLabel("Permissions besides signin (optional)").fill("staff");
    await admin.getByRole("button", { name: "Issue token" }).click();
    const secret = admin.locator(".secret").first();
    await expect.poll(() => secret.textContent()).toMatch(/^\s*[0-9a-f]{64}\s*$/);
    const token = ((await secret.textContent()) ?? "").trim();

    const read = await fetch(`${completionUrl}/api/completion/v1/course/course-v1:TesseraX+DL101+2026/?username=amara`, { headers: { authorization: `Bearer ${token}` } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { results: unknown[] }).results).toHaveLength(1);

    const elsewhere = await fetch(`${appUrl}/api/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(elsewhere.status).toBe(401);
    // The first start's demo token too: issued for Completion, it is no key to the example application.
    const demo = await fetch(`${appUrl}/api/me`, { headers: { authorization: `Bearer ${firstStart.apiToken}` } });
    expect(demo.status).toBe(401);
  });
});
