import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { appName, password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_apps"), launchBrowser()]);
  await system.createUser({ email: "sam@example.org", name: "Sam Superadmin", role: "superadmin", permissions: ["signin"] });
  await system.signonCli("api-users", "create", "--name", "Indexing robot", "--email", "robot@example.org");
  await system.signonCli("permissions", "grant", "--email", "robot@example.org", "--app", appName, "--permissions", "signin");
  // Ten days: inside the 30-day warning.
  await system.signonCli("tokens", "issue", "--email", "robot@example.org", "--app", appName, "--expires-in", String(10 * 86_400));
  page = await newPage(browser);
  await page.goto(`${system.signonUrl}/sign-in`);
  await fillSignIn(page, "sam@example.org", password);
  await page.waitForURL(`${system.signonUrl}/`);
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

async function heading(): Promise<string | null> {
  return page.getByRole("heading", { level: 1 }).textContent();
}

describe("applications and API users, as a superadmin", () => {
  it("renames an application and switches its pushes off; its usage page lists the sign-in", async () => {
    // A sign-in to the example application, for the usage page.
    await page.goto(`${system.appUrl}/`);
    await page.waitForURL((url) => url.origin === system.appUrl);

    await page.goto(`${system.signonUrl}/applications`);
    await page.getByRole("link", { name: appName, exact: true }).click();
    await expect.poll(heading).toBe(appName);
    await checkPage(page, "application-settings");
    await page.getByLabel("Name", { exact: true }).fill("Editorial");
    await page.getByLabel("Off: nothing is queued for this application").check();
    await page.getByLabel("Default permissions (optional)").fill("signin");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => page.locator(".flash").textContent()).toContain("Editorial is saved.");
    await expect.poll(heading).toBe("Editorial");

    await page.getByRole("link", { name: "Sign-ins and monthly users of Editorial" }).click();
    await expect.poll(heading).toBe("Use of Editorial");
    await expect.poll(() => page.getByRole("link", { name: "Sam Superadmin" }).count()).toBe(1);
    await checkPage(page, "application-usage");
  });

  it("warns of a token expiring within 30 days, renews a token once when a third of its lifetime is left, and shows the new token until acknowledged", async () => {
    await page.goto(`${system.signonUrl}/api-users`);
    await page.getByRole("link", { name: "Indexing robot" }).click();
    await expect.poll(heading).toBe("Indexing robot");
    await expect.poll(() => page.locator("#expiry-warning").textContent()).toContain("expire within 30 days");
    await page.getByLabel("On", { exact: true }).check();
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await expect.poll(() => page.locator(".flash").textContent()).toContain("renewed automatically: each token is renewed once, when a third of its lifetime is left");

    // The 10-day token has all its 10 days left: not renewed, however often the job runs.
    expect(await system.signonCli("tokens", "renew-expiring")).toEqual({ renewed: 0 });
    expect(await system.signonCli("tokens", "renew-expiring")).toEqual({ renewed: 0 });
    await page.reload();
    expect(await page.locator("#renewed-tokens").count()).toBe(0);

    // An hour-long token is in its last third at once: renewed at the first run, and only once (the application was renamed above).
    await system.signonCli("tokens", "issue", "--email", "robot@example.org", "--app", "Editorial", "--expires-in", "3600");
    expect(await system.signonCli("tokens", "renew-expiring")).toEqual({ renewed: 1 });
    expect(await system.signonCli("tokens", "renew-expiring")).toEqual({ renewed: 0 });
    await page.reload();
    const token = page.locator("#renewed-tokens ~ .notice .secret");
    await expect.poll(() => token.textContent()).toMatch(/^[0-9a-f]{64}$/);
    expect(await token.count()).toBe(1);
    await checkPage(page, "api-user-renewed-token");
    await page.getByRole("button", { name: "I have copied it" }).click();
    await expect.poll(() => page.locator(".flash").textContent()).toContain("no longer shown");
    expect(await page.locator(".secret").count()).toBe(0);
  });
});
