// Organisations from a register, as shipped: Sign-on starts with SIGNON_ORGANISATION_REGISTER_URL pointing at a
// register served by this test over HTTP, its scheduled job fetches the feed, and a superadmin sees the
// organisations, their parents and closed ones on the organisations page; then the operator's command fetches a
// changed feed, and a broken one changes nothing and says why on the same page.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { runShipped } from "@tessera/test-support";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { password, startTestSystem, type TestSystem } from "./support/system.js";

const admin = { email: "rhea@example.org", name: "Rhea Register" };

/** The register's pages by path (query included); any other path answers 404. */
let pages: Record<string, string> = {};
const requests: string[] = [];
let register: Server;
let registerOrigin: string;
let system: TestSystem;
let browser: Browser;
let page: Page;

/** A GOV.UK-shaped organisation; `parent` is named as GOV.UK names it, by its API address. */
function organisation(slug: string, title: string, contentId: string, options: { closed?: boolean; parent?: string } = {}) {
  return {
    id: `${registerOrigin}/api/organisations/${slug}`,
    title,
    details: { slug, content_id: contentId, govuk_status: options.closed ? "closed" : "live" },
    parent_organisations: options.parent ? [{ id: `${registerOrigin}/api/organisations/${options.parent}`, web_url: `https://www.gov.uk/government/organisations/${options.parent}` }] : [],
  };
}

const ids = {
  ministry: "2b7b8d4e-1c1a-4f3e-9a51-6d0f3c2e1a01",
  agency: "2b7b8d4e-1c1a-4f3e-9a51-6d0f3c2e1a02",
  office: "2b7b8d4e-1c1a-4f3e-9a51-6d0f3c2e1a03",
  board: "2b7b8d4e-1c1a-4f3e-9a51-6d0f3c2e1a04",
};

/** Two pages: the ministry and its agency, then a closed office under the ministry. */
function firstFeed(): Record<string, string> {
  return {
    "/api/organisations": JSON.stringify({
      results: [organisation("ministry-of-maps", "Ministry of Maps", ids.ministry), organisation("survey-agency", "Survey Agency", ids.agency, { parent: "ministry-of-maps" })],
      next_page_url: `${registerOrigin}/api/organisations?page=2`,
    }),
    "/api/organisations?page=2": JSON.stringify({
      results: [organisation("old-charts-office", "Old Charts Office", ids.office, { closed: true, parent: "ministry-of-maps" })],
      next_page_url: null,
    }),
  };
}

/** The organisations table as [name with its tag, parent] rows. */
async function organisationRows(): Promise<string[][]> {
  const rows = await page.locator("table tbody tr").all();
  return Promise.all(
    rows.map(async (row) => [((await row.locator("th").textContent()) ?? "").replace(/\s+/g, " ").trim(), ((await row.locator("td").nth(1).textContent()) ?? "").trim()]),
  );
}

beforeAll(async () => {
  register = createServer((request, response) => {
    const path = request.url ?? "/";
    requests.push(path);
    const body = pages[path];
    if (body === undefined) response.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
    else response.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve) => register.listen(0, "127.0.0.1", resolve));
  registerOrigin = `http://127.0.0.1:${(register.address() as AddressInfo).port}`;
  pages = firstFeed();
  [system, browser] = await Promise.all([
    startTestSystem("browser_organisation_register", {
      // The scheduled job looks a second after start.
      signonEnv: { SIGNON_ORGANISATION_REGISTER_URL: `${registerOrigin}/api/organisations`, SIGNON_JOBS_FIRST_RUN_SECONDS: "1" },
    }),
    launchBrowser(),
  ]);
  await system.createUser({ ...admin, role: "superadmin" });
  page = await newPage(browser);
  await page.goto(`${system.signonUrl}/sign-in`);
  await fillSignIn(page, admin.email, password);
  await page.waitForURL(`${system.signonUrl}/`);
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
  register?.closeAllConnections();
  await new Promise<void>((resolve) => (register ? register.close(() => resolve()) : resolve()));
});

describe("organisations from a register, in the browser", () => {
  it("shows the organisations the scheduled fetch created, with their parents and the closed one", async () => {
    await expect
      .poll(
        async () => {
          await page.goto(`${system.signonUrl}/organisations`);
          return page.locator("#organisation-register").textContent();
        },
        { timeout: 30_000 },
      )
      .toContain("Last fetched");
    const notice = ((await page.locator("#organisation-register").textContent()) ?? "").replace(/\s+/g, " ");
    expect(notice).toContain(`Organisations come from the register at ${registerOrigin}/api/organisations, fetched every 24 hours.`);
    expect(notice).toMatch(/Last fetched \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC: 3 organisations, 3 created, 0 updated\./);
    expect(await organisationRows()).toEqual([
      ["Ministry of Maps", "None"],
      ["Old Charts Office Closed", "Ministry of Maps"],
      ["Survey Agency", "Ministry of Maps"],
    ]);
    // Each page once, by one fetch.
    expect(requests).toEqual(["/api/organisations", "/api/organisations?page=2"]);
    await checkPage(page, "organisations-from-register");

    await page.getByRole("link", { name: "Old Charts Office" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Old Charts Office");
    expect(await page.locator("dl.summary").textContent()).toContain("Closed: offered for nothing new");
    expect(await page.locator("dl.summary").textContent()).toContain(ids.office);
  });

  it("after the operator fetches a changed feed, shows the new name, parent, closed state and organisation", async () => {
    pages = {
      "/api/organisations": JSON.stringify({
        results: [
          organisation("ministry-of-maps", "Ministry of Maps and Charts", ids.ministry),
          organisation("survey-agency", "Survey Agency", ids.agency, { parent: "mapping-board" }),
          organisation("old-charts-office", "Old Charts Office", ids.office, { parent: "ministry-of-maps" }),
          organisation("mapping-board", "Mapping Board", ids.board, { parent: "ministry-of-maps" }),
        ],
      }),
    };
    const fetched = await system.signonCli("organisations", "fetch-register");
    expect(fetched).toMatchObject({ status: "fetched", pages: 1, organisations: 4, counts: { created: 1, updated: 3, unchanged: 0 } });
    await page.goto(`${system.signonUrl}/organisations`);
    expect(await organisationRows()).toEqual([
      ["Mapping Board", "Ministry of Maps and Charts"],
      ["Ministry of Maps and Charts", "None"],
      ["Old Charts Office", "Ministry of Maps and Charts"],
      ["Survey Agency", "Mapping Board"],
    ]);
  });

  it("after a fetch whose second page is broken, shows that nothing changed and why", async () => {
    pages = {
      "/api/organisations": JSON.stringify({ results: [organisation("ministry-of-maps", "Renamed Ministry", ids.ministry)], next_page_url: "/api/organisations?page=2" }),
      "/api/organisations?page=2": '{"results": [',
    };
    const refused = await runShipped("signon-cli", ["organisations", "fetch-register"], system.signonEnv);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain("failed and changed nothing: page 2: the answer is not JSON");
    await page.goto(`${system.signonUrl}/organisations`);
    const notice = ((await page.locator("#organisation-register").textContent()) ?? "").replace(/\s+/g, " ");
    expect(notice).toMatch(/The latest fetch, \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC, failed and changed nothing: page 2: the answer is not JSON/);
    expect((await organisationRows()).map((row) => row[0])).toEqual(["Mapping Board", "Ministry of Maps and Charts", "Old Charts Office", "Survey Agency"]);
    await checkPage(page, "organisations-register-failed");
  });
});
