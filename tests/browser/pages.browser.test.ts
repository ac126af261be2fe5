import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { appName, password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;
let page: Page;

/** A handful of people, enough for the users list and the README's screenshots to show something real. */
async function seed(): Promise<void> {
  await system.signonCli("organisations", "create", "--slug", "editorial", "--name", "Editorial team");
  await system.signonCli("organisations", "create", "--slug", "finance", "--name", "Finance office");
  await system.createUser({ email: "sam@example.org", name: "Sam Superadmin", role: "superadmin", permissions: ["signin", "admin"] });
  await system.createUser({ email: "ada@example.org", name: "Ada Admin", role: "admin", permissions: ["signin"] });
  await system.createUser({ email: "olu@example.org", name: "Olu Organiser", role: "organisation_admin", permissions: ["signin", "editor"] });
  await system.createUser({ email: "nora@example.org", name: "Nora Normal", permissions: ["signin", "editor"] });
  await system.createUser({ email: "fin@example.org", name: "Finlay Finance", permissions: ["signin"] });
  await system.createUser({ email: "sid@example.org", name: "Sid Suspended", permissions: ["signin"] });
  for (const [email, organisation] of [
    ["olu@example.org", "editorial"],
    ["nora@example.org", "editorial"],
    ["fin@example.org", "finance"],
  ] as const) {
    await system.signonCli("users", "update", "--email", email, "--organisation", organisation);
  }
  await system.signonCli("users", "suspend", "--email", "sid@example.org", "--reason", "On leave until spring");
  await system.signonCli("api-users", "create", "--name", "Publishing robot", "--email", "robot@example.org");
  await system.signonCli("permissions", "grant", "--email", "robot@example.org", "--app", appName, "--permissions", "signin");
  await system.signonCli("tokens", "issue", "--email", "robot@example.org", "--app", appName);
  await system.signonCli(
    "apps", "create", "--name", "Reporting with a long name", "--redirect-uri", "https://reporting.department-of-examples.example/auth/gds/callback",
    "--home-uri", "https://reporting.department-of-examples.example/dashboards/weekly-publishing-figures-for-every-team",
  );
}

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_pages"), launchBrowser()]);
  await seed();
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

/** Follows a link in the main navigation and checks that it is marked as the current page. */
async function navigate(label: string): Promise<void> {
  const nav = page.getByRole("navigation", { name: "Main" });
  await nav.getByRole("link", { name: label, exact: true }).click();
  await expect.poll(() => nav.getByRole("link", { name: label, exact: true }).getAttribute("aria-current")).toBe("page");
}

describe("each main page, as a superadmin", () => {
  it("dashboard and your account", async () => {
    await navigate("Dashboard");
    expect(await heading()).toBe("Your applications");
    await checkPage(page, "dashboard-superadmin");

    await navigate("Your account");
    expect(await heading()).toBe("Your account");
    await checkPage(page, "account");
    // Buttons are written in the page's own font, not the browser's default for controls.
    const fonts = await page.evaluate(() => Array.from(document.querySelectorAll("button"), (button) => getComputedStyle(button).fontFamily));
    expect(fonts.length).toBeGreaterThan(0);
    for (const font of fonts) expect(font).toBe(await page.evaluate(() => getComputedStyle(document.body).fontFamily));

    await page.getByRole("link", { name: "manage" }).click();
    await expect.poll(heading).toBe("Set up 2-step verification");
    await checkPage(page, "two-step-set-up-page");
  });

  it("users list, a user page, the permission grid and the event log", async () => {
    await navigate("Users");
    expect(await heading()).toBe("Users");
    await expect.poll(() => page.locator("tbody tr").count()).toBe(6);
    await checkPage(page, "users-list");

    await page.getByRole("searchbox", { name: "Name or e-mail" }).fill("nora");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(1);
    await page.getByLabel("Status").selectOption("suspended");
    await page.getByRole("searchbox", { name: "Name or e-mail" }).fill("");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => page.locator("tbody th").allTextContents()).toEqual(["Sid Suspended"]);
    await checkPage(page, "users-list-filtered");

    await page.getByRole("link", { name: "Clear filters" }).click();
    await page.getByRole("link", { name: "Nora Normal", exact: true }).click();
    await expect.poll(heading).toBe("Nora Normal");
    await checkPage(page, "user");

    await page.getByRole("link", { name: "Permissions", exact: true }).click();
    await expect.poll(heading).toBe("Permissions of Nora Normal");
    expect(await page.getByRole("group", { name: appName }).getByLabel("editor", { exact: true }).isChecked()).toBe(true);
    await checkPage(page, "permission-grid");

    await page.getByRole("link", { name: "Back to Nora Normal" }).click();
    await page.getByRole("link", { name: "Event log" }).click();
    await expect.poll(heading).toBe("Event log of Nora Normal");
    await expect.poll(() => page.locator("tbody tr").count()).toBeGreaterThan(0);
    await checkPage(page, "user-events");

    await navigate("Users");
    await page.getByRole("link", { name: "Invite a user" }).click();
    await expect.poll(heading).toBe("Invite a user");
    await checkPage(page, "user-new");
  });

  it("applications, an application and its pushes", async () => {
    await navigate("Applications");
    expect(await heading()).toBe("Applications");
    await checkPage(page, "applications");

    // On a 1024 px screen every column, the push counts included, is in view without scrolling sideways.
    expect(page.viewportSize()?.width).toBe(1024);
    const rightEdges = await page.locator("thead th").evaluateAll((cells) => cells.map((cell) => cell.getBoundingClientRect().right));
    expect(rightEdges).toHaveLength(5);
    for (const right of rightEdges) expect(right).toBeLessThanOrEqual(1024);
    expect(await page.locator(".table-wrap").evaluate((wrap) => wrap.scrollWidth - wrap.clientWidth)).toBeLessThanOrEqual(0);
    expect(await page.getByRole("link", { name: "0 failed" }).count()).toBe(2);

    await page.getByRole("link", { name: appName, exact: true }).click();
    await expect.poll(() => page.getByRole("link", { name: `Delivery status of pushes to ${appName}` }).count()).toBe(1);
    await checkPage(page, "application");

    // Retiring and replacing the secret each stop at a page saying what would happen; Cancel goes back untouched.
    await page.getByRole("button", { name: `Retire ${appName}` }).click();
    await expect.poll(heading).toBe(`Retire ${appName}`);
    expect(await page.getByRole("list", { name: "What will happen" }).textContent()).toContain("can no longer sign anyone in");
    await checkPage(page, "application-retire-confirmation");
    await page.getByRole("link", { name: `Cancel: back to ${appName}` }).click();
    await expect.poll(heading).toBe(appName);
    await page.getByRole("button", { name: "Replace the client secret" }).click();
    await expect.poll(heading).toBe(`Replace the client secret of ${appName}`);
    await checkPage(page, "application-secret-confirmation");
    await page.getByRole("link", { name: `Cancel: back to ${appName}` }).click();
    await expect.poll(heading).toBe(appName);

    await page.getByRole("link", { name: `Delivery status of pushes to ${appName}` }).click();
    await expect.poll(heading).toBe(`Pushes to ${appName}`);
    await checkPage(page, "application-pushes");
  });

  it("API users, an API user, and organisations", async () => {
    await navigate("API users");
    expect(await heading()).toBe("API users");
    await checkPage(page, "api-users");

    await page.getByRole("link", { name: "Publishing robot", exact: true }).click();
    await expect.poll(heading).toContain("Publishing robot");
    await checkPage(page, "api-user");

    // Revoking the token: the link leads to a page naming the token; only its Confirm button revokes it.
    await page.getByRole("link", { name: new RegExp(`^Revoke the token for ${appName} issued`) }).click();
    await expect.poll(heading).toBe(`Revoke the token of Publishing robot for ${appName}`);
    await checkPage(page, "api-user-token-revoke-confirmation");
    await page.getByRole("button", { name: `Revoke the token for ${appName}` }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain(`The token for ${appName} is revoked`);
    expect(await page.locator("tbody .tag").allTextContents()).toEqual(["Revoked"]);

    await navigate("Organisations");
    expect(await heading()).toBe("Organisations");
    await checkPage(page, "organisations");

    await page.getByRole("link", { name: "Editorial team", exact: true }).click();
    await expect.poll(heading).toContain("Editorial team");
    await checkPage(page, "organisation");
  });

  it("the development mailbox", async () => {
    await page.goto(`${system.signonUrl}/dev/mail`);
    expect(await heading()).toBe("Development mailbox");
    await checkPage(page, "dev-mail");
  });
});

describe("an address nothing answers", () => {
  it("is a page of the example application, like Sign-on's, with a way home", async () => {
    for (const origin of [system.signonUrl, system.appUrl]) {
      const response = await page.goto(`${origin}/no/such/page`);
      expect(response?.status()).toBe(404);
      expect(response?.headers()["content-type"]).toBe("text/html; charset=utf-8");
      expect(await heading()).toBe("Page not found");
      expect(await page.locator("main").innerText()).toContain("There is no page at this address.");
    }
    await checkPage(page, "editorial-app-not-found");
    await page.getByRole("link", { name: "Back to the home page" }).click();
    // Home is the example application's, which sends a visitor to sign in through Sign-on (already signed in there).
    await page.waitForURL((url) => url.origin === system.appUrl || url.origin === system.signonUrl);
    expect(page.url()).not.toContain("/no/such/page");
  });
});

describe("long unbroken values", () => {
  it("keep the users table's columns on a 1200 px screen: the cells wrap", async () => {
    const longName = `Wolfeschlegelsteinhausenbergerdorff${"x".repeat(165)}`;
    await system.signonCli("users", "create", "--email", "long-name@example.org", "--name", longName);
    await page.setViewportSize({ width: 1200, height: 800 });
    await page.goto(`${system.signonUrl}/users?q=long-name`);
    await expect.poll(() => page.getByRole("link", { name: longName }).count()).toBe(1);

    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const headers = await page.locator("table th").all();
    expect(headers.length).toBeGreaterThan(3);
    for (const header of headers) {
      const box = await header.boundingBox();
      expect(box, (await header.textContent()) ?? "").not.toBeNull();
      expect((box?.x ?? 0) + (box?.width ?? 0), `${await header.textContent()} is on screen`).toBeLessThanOrEqual(1200);
    }
    await checkPage(page, "users-long-name");
    await page.setViewportSize({ width: 1024, height: 800 });
  });
});
