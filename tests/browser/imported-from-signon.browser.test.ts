// After `signon import from-signon` (the shipped command, from a GOV.UK Signon database on MariaDB made as Signon
// makes its rows), in Chromium against the built Sign-on: an administrator signs in with her Signon password and a
// code of her old authenticator app, finds the application with Signon's permission names, grants one of them on a
// person's permission page, and reads the event log Signon kept.
// Needs Debian's chromium and mariadb-server; skipped without MariaDB, except under CI=true.
import { runShipped } from "@tessera/test-support";
import { activeRecordKeys, mariadbUnavailable, pepper, startMariadb, writeSignonFixture, type MariadbServer, type SignonFixture } from "@tessera/test-support/signon-database";
import { Secret, TOTP } from "otpauth";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { startTestSystem, type TestSystem } from "./support/system.js";

const missing = mariadbUnavailable();
if (missing !== null && process.env["CI"] === "true") throw new Error(`${missing}; CI must run the import's browser test`);

describe.skipIf(missing !== null)("Sign-on after the move from GOV.UK Signon, in Chromium", () => {
  let mariadb: MariadbServer;
  let system: TestSystem;
  let browser: Browser;
  let fixture: SignonFixture;

  beforeAll(async () => {
    mariadb = await startMariadb();
    const source = await mariadb.createDatabase("signon_production");
    fixture = await writeSignonFixture(mariadb, "signon_production");
    // The installation's default: admins must use 2-step verification (Alice has it, from Signon).
    [system, browser] = await Promise.all([
      startTestSystem("browser_imported", { twoStepRequiredRoles: "superadmin,admin", signonEnv: { SIGNON_IMPORTED_PASSWORD_PEPPER: pepper } }),
      launchBrowser(),
    ]);
    const run = await runShipped("signon-cli", ["import", "from-signon", source], {
      ...system.signonEnv,
      ACTIVE_RECORD_ENCRYPTION_PRIMARY_KEY: activeRecordKeys.primaryKey,
      ACTIVE_RECORD_ENCRYPTION_KEY_DERIVATION_SALT: activeRecordKeys.derivationSalt,
    });
    if (run.code !== 0) throw new Error(`the import failed (${String(run.code)}): ${run.stderr}`);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await system?.close();
    await mariadb?.stop();
  });

  it("signs an administrator in with her Signon password and her old authenticator app, and she grants a permission Signon named", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(page, fixture.alice.email, fixture.alice.password!);
    await page.waitForURL((url) => url.pathname === "/sign-in/two-step");
    const code = new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(fixture.alice.otpSecret!) }).generate();
    await page.getByLabel("Code from your authenticator app").fill(code);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL(`${system.signonUrl}/`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Your applications");
    expect(await page.getByRole("link", { name: "Publisher" }).count()).toBe(1);

    // Erin's permissions: Publisher's, with the names Signon gave them.
    await page.goto(`${system.signonUrl}/users/${fixture.erin.uid}`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Erin Example");
    await page.getByRole("link", { name: "Permissions", exact: true }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Permissions of Erin Example");
    const grid = page.getByRole("group", { name: "Publisher" });
    expect(await grid.getByLabel("signin", { exact: true }).isChecked()).toBe(true);
    expect(await grid.getByLabel("GDS Editor", { exact: true }).isChecked()).toBe(false);
    await grid.getByLabel("GDS Editor", { exact: true }).check();
    await page.getByRole("button", { name: "Save permissions" }).click();
    await expect.poll(() => page.getByRole("status").count()).toBe(1);
    expect(await page.getByRole("group", { name: "Publisher" }).getByLabel("GDS Editor", { exact: true }).isChecked()).toBe(true);
    await checkPage(page, "imported-permissions");
  });

  it("shows the event log Signon kept, in Sign-on's words", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(page, fixture.alice.email, fixture.alice.password!);
    await page.waitForURL((url) => url.pathname === "/sign-in/two-step");
    // The code of the next step: each step counts once.
    const code = new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(fixture.alice.otpSecret!) }).generate({ timestamp: Date.now() + 30_000 });
    await page.getByLabel("Code from your authenticator app").fill(code);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL(`${system.signonUrl}/`);
    await page.goto(`${system.signonUrl}/users/${fixture.bob.uid}/events`);
    await expect.poll(async () => (await page.locator("main").textContent()) ?? "").toContain("In GOV.UK Signon: 2-step prompt deferred");
  });
});
