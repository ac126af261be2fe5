import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { linkFromMail } from "./support/mailbox.js";
import { appName, password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;

const adminEmail = "bea@example.org";
const superOrganisationAdminEmail = "sol@example.org";
const existingEmail = "already@example.org";
const inviteeEmail = "ines@example.org";
const inviteePassword = "Lantern quarry velvet 73 harbour";

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_invite_batch"), launchBrowser()]);
  await system.createUser({ email: adminEmail, name: "Bea Admin", role: "admin" });
  await system.createUser({ email: existingEmail, name: "Already Here" });
  const folder = await mkdtemp(join(tmpdir(), "tessera-organisations-"));
  const file = join(folder, "organisations.csv");
  await writeFile(file, "slug,name,closed\nopen-org,Open Org,no\nold-closed-org,Old Closed Org,yes\n");
  await system.signonCli("organisations", "import", file);
  await rm(folder, { recursive: true });
  await system.signonCli("organisations", "create", "--slug", "agency", "--name", "Agency");
  await system.signonCli(
    "users", "create", "--email", superOrganisationAdminEmail, "--name", "Sol Agency", "--role", "super_organisation_admin", "--organisation", "agency", "--password", password,
  );
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

/** The cells of the batch page's rows: line, name, address, outcome, details. */
async function outcomes(page: Page): Promise<string[][]> {
  const rows = await page.locator("#batch-rows tbody tr").all();
  return Promise.all(rows.map(async (row) => (await row.locator("td").allTextContents()).map((cell) => cell.trim())));
}

describe("batch invitations through the browser", () => {
  it("an administrator, offered open organisations only, uploads a CSV file and sees each row's outcome; an invited person accepts and has the permissions chosen", async () => {
    const admin = await newPage(browser);
    await admin.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(admin, adminEmail, password);
    await admin.waitForURL(`${system.signonUrl}/`);
    await admin.goto(`${system.signonUrl}/users/new`);
    const singleChoices = await admin.getByLabel("Organisation", { exact: true }).locator("option").allTextContents();
    await admin.getByRole("link", { name: "Invite many people from a CSV file" }).click();
    await admin.waitForURL(`${system.signonUrl}/users/invite-batch`);
    await expect.poll(() => admin.getByRole("heading", { level: 1 }).textContent()).toBe("Invite people from a CSV file");
    await checkPage(admin, "invite-batch-form");
    // A closed organisation takes nobody new, so neither invitation form offers it.
    const openOnly = ["No organisation", "Agency", "Open Org"];
    expect(singleChoices.map((text) => text.trim())).toEqual(openOnly);
    expect((await admin.getByLabel("Organisation for rows that name none").locator("option").allTextContents()).map((text) => text.trim())).toEqual(openOnly);

    // Without a file, the form says so next to the field.
    await admin.getByRole("button", { name: "Send invitations" }).click();
    await expect.poll(() => admin.locator("#file-error").textContent()).toBe("Choose a CSV file, or paste the rows");

    const csv = ["Name,Email", `Ines Invitee,${inviteeEmail}`, `Already Here,${existingEmail}`, "No Address,not-an-address"].join("\n");
    await admin.getByLabel("CSV file").setInputFiles({ name: "people.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    const grid = admin.getByRole("group", { name: appName });
    await grid.getByLabel("signin", { exact: true }).check();
    await grid.getByLabel("editor", { exact: true }).check();
    await admin.getByRole("button", { name: "Send invitations" }).click();
    await admin.waitForURL(/\/users\/invite-batch\/[0-9a-f-]{36}$/);

    // The page refreshes itself until the job has been through every row.
    await expect.poll(() => admin.locator("#batch-status").textContent(), { timeout: 20_000, interval: 250 }).toContain("Finished");
    expect(await outcomes(admin)).toEqual([
      ["2", "Ines Invitee", inviteeEmail, "Invited", ""],
      ["3", "Already Here", existingEmail, "Already exists", "An account already has this e-mail address"],
      ["4", "No Address", "not-an-address", "Not valid", 'Not an e-mail address: "not-an-address"'],
    ]);
    expect(await admin.locator('meta[http-equiv="refresh"]').count()).toBe(0);
    // The page says what every row was given: the permissions chosen on the form.
    expect(await admin.getByRole("list", { name: "Permissions granted when they accept:" }).getByRole("listitem").allTextContents()).toEqual([`${appName}: editor, signin`]);
    await checkPage(admin, "invite-batch-job");

    const invitee = await newPage(browser);
    const link = await linkFromMail(invitee, system.signonUrl, { to: inviteeEmail, subject: "You have been invited to Tessera Sign-on" });
    await invitee.goto(link);
    await invitee.getByLabel("New password", { exact: true }).fill(inviteePassword);
    await invitee.getByLabel("Confirm new password").fill(inviteePassword);
    await invitee.getByRole("button", { name: "Set password and sign in" }).click();
    await invitee.waitForURL(`${system.signonUrl}/`);
    await expect.poll(() => invitee.getByRole("link", { name: appName }).count()).toBe(1);

    // The example application hears of the permissions chosen on the batch.
    await invitee.goto(`${system.appUrl}/`);
    await invitee.waitForURL(`${system.appUrl}/`);
    await expect.poll(() => invitee.locator("#permissions li").allTextContents()).toEqual(expect.arrayContaining(["signin", "editor"]));
  });

  it("a super organisation admin is offered only their own organisation and those under it (their own chosen, no “No organisation”), and a CSV of their own people is invited as it is", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(page, superOrganisationAdminEmail, password);
    await page.waitForURL(`${system.signonUrl}/`);
    await page.goto(`${system.signonUrl}/users/new`);
    const singleChoices = (await page.getByLabel("Organisation", { exact: true }).locator("option").allTextContents()).map((text) => text.trim());
    await page.goto(`${system.signonUrl}/users/invite-batch`);
    const organisation = page.getByLabel("Organisation for rows that name none");
    expect((await organisation.locator("option").allTextContents()).map((text) => text.trim())).toEqual(["Agency"]);
    expect(singleChoices).toEqual(["Agency"]);
    expect(await organisation.locator("option:checked").textContent()).toBe("Agency");
    await checkPage(page, "invite-batch-form-super-organisation-admin");

    // Every row names their organisation; the choice for rows naming none is left as it is.
    const csv = ["Name,Email,Organisation", "Ola Agency,ola@example.org,agency", "Per Agency,per@example.org,Agency"].join("\n");
    await page.getByLabel("CSV file").setInputFiles({ name: "agency.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    await page.getByRole("button", { name: "Send invitations" }).click();
    await page.waitForURL(/\/users\/invite-batch\/[0-9a-f-]{36}$/);
    await expect.poll(() => page.locator("#batch-status").textContent(), { timeout: 20_000, interval: 250 }).toContain("Finished");
    expect(await outcomes(page)).toEqual([
      ["2", "Ola Agency", "ola@example.org", "Invited", ""],
      ["3", "Per Agency", "per@example.org", "Invited", ""],
    ]);
    expect(await page.locator("#batch-permissions").textContent()).toBe("Permissions granted when they accept: none.");
  });
});
