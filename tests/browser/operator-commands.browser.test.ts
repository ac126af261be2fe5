import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { appName, password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;
let page: Page;
let scratch: string;

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_operator"), launchBrowser()]);
  scratch = await mkdtemp(join(tmpdir(), "signon-operator-"));
  await system.createUser({ email: "sam@example.org", name: "Sam Superadmin", role: "superadmin", permissions: ["signin"] });
  await system.signonCli("api-users", "create", "--name", "Indexing robot", "--email", "robot@example.org");
  await system.signonCli("permissions", "grant", "--email", "robot@example.org", "--app", appName, "--permissions", "signin");
  page = await newPage(browser);
  await page.goto(`${system.signonUrl}/sign-in`);
  await fillSignIn(page, "sam@example.org", password);
  await page.waitForURL(`${system.signonUrl}/`);
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function heading(): Promise<string | null> {
  return page.getByRole("heading", { level: 1 }).textContent();
}

/** The application's settings page, reached from the applications list. */
async function openApplication(): Promise<void> {
  await page.goto(`${system.signonUrl}/applications`);
  await page.getByRole("link", { name: appName, exact: true }).click();
  await expect.poll(heading).toBe(appName);
}

/** The events listed on the application's event log, reached from its page, as their words. */
async function applicationEvents(): Promise<string[]> {
  await openApplication();
  await page.getByRole("link", { name: `Event log of ${appName}` }).click();
  await expect.poll(heading).toBe(`Event log of ${appName}`);
  return page.locator("tbody tr td:nth-child(2)").allTextContents();
}

describe("operator commands, as the administrator sees them", () => {
  it("after `signon apps rewrite-uris` the application's page shows the new URIs and its event log shows the rewrite; a dry run changed nothing", async () => {
    const appHost = new URL(system.appUrl).host;
    const staging = "https://editorial.staging.example";
    const uris = () => Promise.all(["Redirect URIs", "Home URI (optional)", "Push base URL (optional)"].map((label) => page.getByLabel(label, { exact: true }).inputValue()));

    const dryRun = await system.signonCli("apps", "rewrite-uris", "--from", appHost, "--to", staging, "--dry-run");
    expect(dryRun).toMatchObject({ dry_run: true, changed_applications: 1, changed_uris: 3 });
    await openApplication();
    expect(await uris()).toEqual([`${system.appUrl}/auth/gds/callback`, `${system.appUrl}/`, `${system.appUrl}/auth/gds/api`]);

    expect(await system.signonCli("apps", "rewrite-uris", "--from", appHost, "--to", staging)).toMatchObject({ dry_run: false, changed_uris: 3 });
    await page.reload();
    expect(await uris()).toEqual([`${staging}/auth/gds/callback`, `${staging}/`, `${staging}/auth/gds/api`]);
    await checkPage(page, "application-rewritten-uris");

    expect(await applicationEvents()).toEqual([
      `Application URIs rewritten for another environment from ${appHost} to ${staging} (3 URIs)`,
      "Application created",
    ]);
    expect(await page.locator("tbody tr td:nth-child(3)").first().textContent()).toBe("Sign-on (a command or a job)");
    await checkPage(page, "application-event-log");
  });

  it("after `signon credentials export` the application's event log shows each secret exported and where it went, and the API user's page lists the new token", async () => {
    const out = join(scratch, "secrets");
    const exported = await system.signonCli("credentials", "export", "--app", appName, "--api-user", "robot@example.org", "--out", out, "--namespace", "editorial", "--replace-secrets");
    expect(exported).toMatchObject({ secrets: [{ name: "signon-app-editorial-app" }, { name: "signon-token-indexing-robot-editorial-app" }] });
    expect((await readdir(out)).sort()).toEqual(["signon-app-editorial-app.yaml", "signon-token-indexing-robot-editorial-app.yaml"]);

    const events = await applicationEvents();
    expect(events.slice(0, 3)).toEqual([
      `Credentials exported to Kubernetes: Indexing robot as secret signon-token-indexing-robot-editorial-app in namespace editorial, with a new API token (written to ${join(out, "signon-token-indexing-robot-editorial-app.yaml")})`,
      `Credentials exported to Kubernetes as secret signon-app-editorial-app in namespace editorial, with a new client secret (written to ${join(out, "signon-app-editorial-app.yaml")})`,
      "Application secret rotated",
    ]);
    await checkPage(page, "application-event-log-export");

    await page.goto(`${system.signonUrl}/api-users`);
    await page.getByRole("link", { name: "Indexing robot" }).click();
    await expect.poll(heading).toBe("Indexing robot");
    await expect.poll(() => page.getByRole("rowheader", { name: appName, exact: true }).count()).toBe(1);
  });
});
