import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { appName, password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;
let admin: Page;
let user: Page;

const adminEmail = "amir@example.org";
const userEmail = "pat@example.org";
const userName = "Pat Permission";

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_permissions"), launchBrowser()]);
  await system.createUser({ email: adminEmail, name: "Amir Admin", role: "admin" });
  await system.createUser({ email: userEmail, name: userName, permissions: ["signin"] });
  [admin, user] = await Promise.all([newPage(browser), newPage(browser)]);
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

/** The permissions the example application lists for the signed-in user on its home page, reloading it. */
async function permissionsInApp(page: Page): Promise<string[]> {
  await page.goto(`${system.appUrl}/`);
  if (new URL(page.url()).origin !== system.appUrl) return [];
  return page.locator("#permissions li").allTextContents();
}

async function openUserPage(page: Page, name: string): Promise<void> {
  await page.goto(`${system.signonUrl}/users`);
  await page.getByRole("searchbox", { name: "Name or e-mail" }).fill(name);
  await page.getByRole("button", { name: "Filter" }).click();
  await page.getByRole("link", { name, exact: true }).click();
  await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe(name);
}

describe("permissions and suspension reach the example application", () => {
  it("a permission granted on the grid arrives in the example application", async () => {
    await user.goto(`${system.appUrl}/`);
    await fillSignIn(user, userEmail, password);
    await user.waitForURL(`${system.appUrl}/`);
    expect(await permissionsInApp(user)).toEqual(["signin"]);
    await checkPage(user, "example-app-home");
    // Without the admin permission, the admin page says which one it needs and offers ways back.
    expect((await user.goto(`${system.appUrl}/admin`))?.status()).toBe(403);
    await checkPage(user, "example-app-forbidden");
    await user.getByRole("link", { name: "Back to the home page" }).click();
    await user.waitForURL(`${system.appUrl}/`);

    await admin.goto(`${system.signonUrl}/sign-in`);
    await fillSignIn(admin, adminEmail, password);
    await admin.waitForURL(`${system.signonUrl}/`);
    await openUserPage(admin, userName);
    await admin.getByRole("link", { name: "Permissions", exact: true }).click();
    await expect.poll(() => admin.getByRole("heading", { level: 1 }).textContent()).toBe(`Permissions of ${userName}`);

    const grid = admin.getByRole("group", { name: appName });
    expect(await grid.getByLabel("signin", { exact: true }).isChecked()).toBe(true);
    expect(await grid.getByLabel("editor", { exact: true }).isChecked()).toBe(false);
    await grid.getByLabel("editor", { exact: true }).check();
    await admin.getByRole("button", { name: "Save permissions" }).click();
    await expect.poll(() => admin.getByRole("status").count()).toBe(1);
    expect(await admin.getByRole("group", { name: appName }).getByLabel("editor", { exact: true }).isChecked()).toBe(true);

    // The push outbox delivers the change; the application's page shows it once it has.
    await expect.poll(() => permissionsInApp(user), { timeout: 15_000, interval: 250 }).toEqual(expect.arrayContaining(["signin", "editor"]));
  });

  it("suspending the user with a reason ends their session in the example application", async () => {
    await openUserPage(admin, userName);
    // The user page's button only leads to the confirmation page, which names what will happen and asks for the reason.
    await admin.getByRole("button", { name: `Suspend ${userName}` }).click();
    await expect.poll(() => admin.getByRole("heading", { level: 1 }).textContent()).toBe(`Suspend ${userName}`);
    expect(await admin.getByRole("list", { name: "What will happen" }).textContent()).toContain(`told to sign them out: ${appName}`);
    await checkPage(admin, "user-suspend-confirmation");
    await admin.getByRole("button", { name: `Suspend ${userName}` }).click();
    await expect.poll(() => admin.getByRole("alert").textContent()).toContain("Enter the reason for the suspension");
    await checkPage(admin, "user-suspend-confirmation-error");
    await admin.getByLabel("Reason for the suspension").fill("Left the editorial team");
    await admin.getByRole("button", { name: `Suspend ${userName}` }).click();
    await expect.poll(() => admin.getByRole("status").count()).toBe(1);
    await expect.poll(() => admin.locator("dl.summary").textContent()).toContain("Left the editorial team");
    await checkPage(admin, "user-suspended");

    // Once the suspension is pushed, the application no longer trusts its session and sends the person back to Sign-on.
    await expect
      .poll(
        async () => {
          await user.goto(`${system.appUrl}/`);
          return new URL(user.url()).origin;
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBe(system.signonUrl);
    // Their Sign-on session ended too: Sign-on asks them to sign in, and refuses them.
    expect(new URL(user.url()).pathname).toBe("/sign-in");
    await fillSignIn(user, userEmail, password);
    await expect.poll(() => user.getByRole("alert").count()).toBe(1);
    expect(new URL(user.url()).origin).toBe(system.signonUrl);
  });
});
