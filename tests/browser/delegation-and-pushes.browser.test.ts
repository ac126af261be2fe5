import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { appName, password, startTestSystem, type TestSystem } from "./support/system.js";

// Two rows of the parity table, where administrators see them: an organisation admin grants only on applications
// they may sign in to themselves (row 31), and a suspension is pushed only to applications that have signed the
// person in (row 23).

let system: TestSystem;
let browser: Browser;
let superadmin: Page;
let organisationAdmin: Page;
let person: Page;
let ledgerId: string;
let ledgerClientId: string;

const superadminEmail = "sam.super@example.org";
const organisationAdminEmail = "olga.agency@example.org";
const personEmail = "pat.agency@example.org";
const personName = "Pat Agency";
const ledger = "Ledger";

async function heading(page: Page): Promise<string | null> {
  return page.getByRole("heading", { level: 1 }).textContent();
}

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto(`${system.signonUrl}/sign-in`);
  await fillSignIn(page, email, password);
  await page.waitForURL(`${system.signonUrl}/`);
}

async function openUserPage(page: Page, name: string): Promise<void> {
  await page.goto(`${system.signonUrl}/users`);
  await page.getByRole("searchbox", { name: "Name or e-mail" }).fill(name);
  await page.getByRole("button", { name: "Filter" }).click();
  await page.getByRole("link", { name, exact: true }).click();
  await expect.poll(() => heading(page)).toBe(name);
}

/** Sets an application's delegatable permissions on its page, as a superadmin; returns the application's id. */
async function setDelegatable(page: Page, application: string, permissions: string): Promise<string> {
  await page.goto(`${system.signonUrl}/applications`);
  await page.getByRole("link", { name: application, exact: true }).click();
  await expect.poll(() => heading(page)).toBe(application);
  await page.getByLabel("Delegatable permissions (optional)").fill(permissions);
  await page.getByRole("button", { name: "Save changes" }).click();
  await expect.poll(() => page.getByRole("status").count()).toBe(1);
  return new URL(page.url()).pathname.split("/")[2] ?? "";
}

/** The rows of the event log open on `page`: [event, application], newest first. */
async function eventLog(page: Page): Promise<string[][]> {
  const rows = await page.locator("table tbody tr").all();
  const cells = await Promise.all(rows.map((row) => row.locator("td").allTextContents()));
  return cells.map((row) => [row[1]?.trim() ?? "", row[3]?.trim() ?? ""]);
}

/** The kinds of push listed for `email` on an application's pushes page. */
async function pushKindsFor(page: Page, application: string, email: string): Promise<string[]> {
  await page.goto(`${system.signonUrl}/applications`);
  await page.getByRole("link", { name: application, exact: true }).click();
  await page.getByRole("link", { name: `Delivery status of pushes to ${application}` }).click();
  await expect.poll(() => heading(page)).toBe(`Pushes to ${application}`);
  const rows = page.locator("tbody tr").filter({ has: page.getByRole("rowheader", { name: email, exact: true }) });
  return (await rows.locator("td:nth-child(2)").allTextContents()).sort();
}

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_delegation_pushes"), launchBrowser()]);
  await system.createUser({ email: superadminEmail, name: "Sam Super", role: "superadmin" });
  await system.signonCli("organisations", "create", "--slug", "agency", "--name", "Agency");
  // Ledger pushes to a closed port: what it is sent stays listed on its pushes page.
  const registered = await system.signonCli("apps", "create", "--name", ledger, "--redirect-uri", "http://127.0.0.1:9/auth/gds/callback", "--permissions", "approver");
  ledgerClientId = String(registered["client_id"]);
  for (const [email, name, role] of [
    [organisationAdminEmail, "Olga Agency", "organisation_admin"],
    [personEmail, personName, "normal"],
  ] as const) {
    await system.signonCli("users", "create", "--email", email, "--name", name, "--role", role, "--organisation", "agency", "--password", password);
    await system.signonCli("permissions", "grant", "--email", email, "--app", appName, "--permissions", "signin");
  }
  // Pat may sign in to Ledger; Olga may not.
  await system.signonCli("permissions", "grant", "--email", personEmail, "--app", ledger, "--permissions", "signin");
  [superadmin, organisationAdmin, person] = await Promise.all([newPage(browser), newPage(browser), newPage(browser)]);
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

describe("an organisation admin grants only on applications they may sign in to", () => {
  it("sees and changes the example application's delegatable permissions, not Ledger's, and a hand-made grant or revoke for Ledger is refused", async () => {
    await signIn(superadmin, superadminEmail);
    await setDelegatable(superadmin, appName, "signin, editor");
    ledgerId = await setDelegatable(superadmin, ledger, "signin, approver");

    await signIn(organisationAdmin, organisationAdminEmail);
    await openUserPage(organisationAdmin, personName);
    await organisationAdmin.getByRole("link", { name: "Permissions", exact: true }).click();
    await expect.poll(() => heading(organisationAdmin)).toBe(`Permissions of ${personName}`);
    expect(await organisationAdmin.getByRole("group", { name: ledger }).count()).toBe(0);
    const grid = organisationAdmin.getByRole("group", { name: appName });
    expect(await grid.getByLabel("admin", { exact: true }).count()).toBe(0);
    await checkPage(organisationAdmin, "permission-grid-organisation-admin");
    await grid.getByLabel("editor", { exact: true }).check();
    await organisationAdmin.getByRole("button", { name: "Save permissions" }).click();
    await expect.poll(() => organisationAdmin.getByRole("status").count()).toBe(1);

    // The same form, posted by hand with a Ledger box: refused, nothing changed.
    const form = organisationAdmin.locator("form").filter({ has: organisationAdmin.getByRole("button", { name: "Save permissions" }) });
    const action = new URL((await form.getAttribute("action")) ?? "", system.signonUrl).href;
    const csrf = (await form.locator('input[name="_csrf"]').getAttribute("value")) ?? "";
    const refused = await organisationAdmin.request.post(action, { form: { _csrf: csrf, permissions: `${ledgerId}:approver` }, maxRedirects: 0 });
    expect(refused.status()).toBe(403);
    // And a hand-made revoke of Pat's Ledger signin (a form saying it showed that box ticked, sent cleared): refused too.
    const revoke = await organisationAdmin.request.post(action, { form: { _csrf: csrf, shown: "yes", shown_held: `${ledgerId}:signin` }, maxRedirects: 0 });
    expect(revoke.status()).toBe(403);

    await openUserPage(superadmin, personName);
    await superadmin.getByRole("link", { name: "Permissions", exact: true }).click();
    const ledgerGrid = superadmin.getByRole("group", { name: ledger });
    expect(await ledgerGrid.getByLabel("signin", { exact: true }).isChecked()).toBe(true);
    expect(await ledgerGrid.getByLabel("approver", { exact: true }).isChecked()).toBe(false);
    expect(await superadmin.getByRole("group", { name: appName }).getByLabel("editor", { exact: true }).isChecked()).toBe(true);
  });
});

describe("a suspension is pushed only where the person has signed in", () => {
  it("tells the example application, where Pat signed in, and not Ledger, where Pat only holds signin and began a sign-in never finished; the page, the event log and the pushes agree", async () => {
    await person.goto(`${system.appUrl}/`);
    await fillSignIn(person, personEmail, password);
    await person.waitForURL(`${system.appUrl}/`);
    await expect.poll(() => person.locator("#permissions li").allTextContents()).toEqual(expect.arrayContaining(["signin", "editor"]));
    // A sign-in to Ledger that never comes back: Sign-on issues a code, and Ledger (nothing listens there) never exchanges it.
    const authorize = new URL("/oauth/authorize", system.signonUrl);
    for (const [name, value] of Object.entries({ response_type: "code", client_id: ledgerClientId, redirect_uri: "http://127.0.0.1:9/auth/gds/callback", state: "never-back" })) {
      authorize.searchParams.set(name, value);
    }
    const abandoned = await person.request.get(authorize.href, { maxRedirects: 0 });
    expect(abandoned.status()).toBe(302);
    expect(abandoned.headers()["location"]).toMatch(/^http:\/\/127\.0\.0\.1:9\/auth\/gds\/callback\?code=/);

    await openUserPage(superadmin, personName);
    const userPage = superadmin.url();
    // The event log counts a sign-in where a code was exchanged, as the pushes do: Ledger's code alone is not one.
    await superadmin.goto(`${userPage}/events`);
    const before = await eventLog(superadmin);
    expect(before).toContainEqual(["Sign-in code issued for an application", ledger]);
    expect(before).toContainEqual(["Signed in to an application: it issued them a token", appName]);
    expect(before).not.toContainEqual(["Signed in to an application: it issued them a token", ledger]);

    await superadmin.goto(userPage);
    await superadmin.getByRole("button", { name: `Suspend ${personName}` }).click();
    await expect.poll(() => heading(superadmin)).toBe(`Suspend ${personName}`);
    expect(await superadmin.getByRole("list", { name: "What will happen" }).textContent()).toContain(
      `The applications that issued them a token are told to sign them out: ${appName}.`,
    );
    await superadmin.getByLabel("Reason for the suspension").fill("Moved to another department");
    await superadmin.getByRole("button", { name: `Suspend ${personName}` }).click();
    await expect.poll(() => superadmin.locator("dl.summary").textContent()).toContain("Moved to another department");
    await superadmin.goto(`${userPage}/events`);
    expect((await eventLog(superadmin))[0]).toEqual([
      `Suspended (reason: Moved to another department); the applications that issued them a token were told to sign them out: ${appName}`,
      "",
    ]);
    await superadmin.goto(userPage);

    // The example application signs Pat out once the suspension arrives.
    await expect
      .poll(
        async () => {
          await person.goto(`${system.appUrl}/`);
          return new URL(person.url()).origin;
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBe(system.signonUrl);
    expect(await pushKindsFor(superadmin, appName, personEmail)).toEqual(["Sign out (reauth)", "Update"]);
    // Ledger was told of its own permission change only (signin granted), never of the suspension.
    expect(await pushKindsFor(superadmin, ledger, personEmail)).toEqual(["Update"]);
    await checkPage(superadmin, "application-pushes-targeted");
  });
});
