// The organisation register (capability row 30): a real HTTP server serves the feed's pages, Sign-on fetches them
// over HTTP into a real database, and every outcome is read back from the database, the audit events, /metrics,
// the log lines and the organisations page.
import { readFileSync } from "node:fs";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { fetchOrganisationRegister, type RegisterFetchOutcome } from "../../src/accounts/organisation-register/fetch-organisation-register.js";
import { startOrganisationRegisterJob } from "../../src/accounts/organisation-register/register-job.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import type { SignonContext } from "../../src/context.js";
import { openSignonDatabase } from "../../src/database.js";
import { auditEvents, organisations } from "../../src/db/schema.js";
import { statementRunner } from "../../src/db/statements.js";
import { claimRegisterFetch, extendRegisterLease, readRegisterState } from "../../src/repositories/organisation-register.js";
import { signedInBrowser } from "../support/browser.js";
import { runSignonCli } from "../support/cli.js";
import { createUser, defaultPassword } from "../support/factories.js";
import { RegisterServer, type RegisterAnswer } from "../support/register-server.js";
import { buildTestSignon, openTestDatabase, testConfig } from "../support/signon.js";

const register = await RegisterServer.start();
const feedUrl = `${register.origin}/api/organisations`;
const registerEnv = { SIGNON_ORGANISATION_REGISTER_URL: feedUrl, SIGNON_ORGANISATION_REGISTER_TIMEOUT_SECONDS: "1" };
const database = await openTestDatabase();
const signon = await buildTestSignon(database, testConfig(registerEnv));
const ctx = signon.ctx;
afterAll(async () => {
  await signon.app.close();
  await database.close();
  await register.close();
});
beforeEach(async () => {
  await database.reset();
  register.serve({});
});

const ids = {
  cabinetOffice: "96ae61d6-c2a1-48cb-8e67-da9d105ae381",
  gds: "af07d5a5-df63-4ddc-9383-6a666845ebe9",
  oldOffice: "0f3c5a35-7d8e-4b8e-9d0c-2f8e7a1b4c11",
  agency: "5a1e0c55-6b8a-4f0e-8f57-0d7c6c9a2e22",
  department: "c3d9b1f0-2a4e-4c8b-b0e1-7f6a5d4c3b33",
};

/** A GOV.UK-shaped organisation, its parents named as GOV.UK names them (by `id` and `web_url`) unless given otherwise. */
function entry(slug: string, title: string, contentId: string, options: { status?: string; parents?: unknown[] } = {}) {
  return {
    id: `https://www.gov.uk/api/organisations/${slug}`,
    title,
    format: "Other",
    web_url: `https://www.gov.uk/government/organisations/${slug}`,
    details: { slug, abbreviation: null, closed_at: null, govuk_status: options.status ?? "live", content_id: contentId },
    analytics_identifier: "X1",
    parent_organisations: options.parents ?? [],
    child_organisations: [],
    superseded_organisations: [],
  };
}
const parent = (slug: string) => ({ id: `https://www.gov.uk/api/organisations/${slug}`, web_url: `https://www.gov.uk/government/organisations/${slug}` });

/**
 * Three pages: the first links to the second with an absolute `next_page_url`, the second to the third with a
 * relative link in `_response_info.links`; a parent (department) comes on a later page than its child (agency).
 */
function goodFeed(): Record<string, RegisterAnswer> {
  return {
    "/api/organisations": {
      json: {
        results: [entry("cabinet-office", "Cabinet Office", ids.cabinetOffice), entry("government-digital-service", "Government Digital Service", ids.gds, { parents: [parent("cabinet-office")] })],
        current_page: 1,
        pages: 3,
        next_page_url: `${register.origin}/api/organisations?page=2`,
      },
    },
    "/api/organisations?page=2": {
      json: {
        _response_info: { status: "ok", links: [{ href: "/api/organisations?page=1", rel: "previous" }, { href: "/api/organisations?page=3", rel: "next" }] },
        results: [
          entry("old-office", "Old Office", ids.oldOffice, { status: "closed", parents: [{ web_url: "https://www.gov.uk/government/organisations/cabinet-office" }] }),
          entry("agency-x", "Agency X", ids.agency, { parents: [{ details: { slug: "department-y" } }, parent("cabinet-office")] }),
        ],
        current_page: 2,
      },
    },
    "/api/organisations?page=3": { json: { results: [entry("department-y", "Department Y", ids.department)], current_page: 3, next_page_url: null } },
  };
}

/** Every organisation as slug, name, parent slug and closed flag, by slug. */
async function stored(): Promise<[string, string, string | null, boolean][]> {
  const rows = await database.db.select().from(organisations).orderBy(asc(organisations.slug));
  const slugs = new Map(rows.map((row) => [row.id, row.slug]));
  return rows.map((row) => [row.slug, row.name, row.parentId === null ? null : (slugs.get(row.parentId) ?? "?"), row.closed]);
}

/** What was there before the first fetch: the cabinet office under an old name, the old office open, one made by hand. */
async function existingOrganisations(): Promise<void> {
  await createOrganisation(ctx, { slug: "cabinet-office", name: "Cabinet Office (old name)", contentId: ids.cabinetOffice });
  await createOrganisation(ctx, { slug: "old-office", name: "Old Office", contentId: ids.oldOffice });
  // Made here before the register was configured: the register's content id replaces its own.
  await createOrganisation(ctx, { slug: "department-y", name: "Department Y" });
  await createOrganisation(ctx, { slug: "hand-made", name: "Hand Made" });
}

function logged(): { lines: string[]; log: { info(message: string): void; error(message: string): void } } {
  const lines: string[] = [];
  return { lines, log: { info: (message) => lines.push(`info: ${message}`), error: (message) => lines.push(`error: ${message}`) } };
}

async function metrics(): Promise<string> {
  return (await signon.app.inject({ method: "GET", url: "/metrics" })).body;
}

function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const fetchNow = (log?: ReturnType<typeof logged>["log"], context: SignonContext = ctx) => fetchOrganisationRegister(context, { force: true, ...(log ? { log } : {}) });

describe("fetching the organisation register", () => {
  it("creates and updates organisations from every page (names, parents, closed flags, content ids), deletes nothing, and changes nothing the second time", async () => {
    await existingOrganisations();
    register.serve(goodFeed());
    const { lines, log } = logged();
    const first = await fetchNow(log);
    expect(register.requests).toEqual(["/api/organisations", "/api/organisations?page=2", "/api/organisations?page=3"]);
    expect(first).toEqual({
      status: "fetched",
      register: feedUrl,
      pages: 3,
      organisations: 5,
      created: 2,
      updated: 3,
      unchanged: 0,
      results: [
        { slug: "cabinet-office", page: 1, item: 1, outcome: "updated", message: "changed: name" },
        { slug: "government-digital-service", page: 1, item: 2, outcome: "created" },
        { slug: "old-office", page: 2, item: 1, outcome: "updated", message: "changed: parent, closed" },
        { slug: "agency-x", page: 2, item: 2, outcome: "created" },
        { slug: "department-y", page: 3, item: 1, outcome: "updated", message: "changed: content id" },
      ],
    } satisfies RegisterFetchOutcome);
    expect(await stored()).toEqual([
      ["agency-x", "Agency X", "department-y", false],
      ["cabinet-office", "Cabinet Office", null, false],
      ["department-y", "Department Y", null, false],
      ["government-digital-service", "Government Digital Service", "cabinet-office", false],
      ["hand-made", "Hand Made", null, false],
      ["old-office", "Old Office", "cabinet-office", true],
    ]);
    const [department] = await database.db.select().from(organisations).where(eq(organisations.slug, "department-y"));
    expect(department?.contentId).toBe(ids.department);
    expect(lines).toEqual([`info: Organisation register ${feedUrl}: fetched 5 organisation(s) on 3 page(s): created 2, updated 3, 0 unchanged`]);

    register.serve(goodFeed());
    const second = await fetchNow();
    expect(register.requests).toHaveLength(3);
    expect(second).toMatchObject({ status: "fetched", pages: 3, organisations: 5, created: 0, updated: 0, unchanged: 5 });
    expect((await stored()).length).toBe(6);

    const events = await database.db.select().from(auditEvents).where(eq(auditEvents.action, "organisation_register_fetched")).orderBy(asc(auditEvents.id));
    expect(events.map((event) => event.details)).toEqual([
      { register: feedUrl, pages: 3, organisations: 5, created: 2, updated: 3, unchanged: 0, invalid: 0 },
      { register: feedUrl, pages: 3, organisations: 5, created: 0, updated: 0, unchanged: 5, invalid: 0 },
    ]);
    const state = await readRegisterState(database.db);
    expect(state).toMatchObject({ failures: 0, consecutiveFailures: 0, lastError: null, leaseUntil: null, lastSummary: { pages: 3, organisations: 5, created: 0, updated: 0, unchanged: 5 } });
    const text = await metrics();
    expect(sample(text, "signon_organisation_register_fetch_failures_total")).toBe(0);
    expect(sample(text, "signon_organisation_register_last_success_timestamp_seconds")).toBe(Math.floor(ctx.now().getTime() / 1000));
  });

  it("follows a later feed: renames, moves, reopens and re-slugs by content id, and keeps the organisations it no longer lists", async () => {
    register.serve(goodFeed());
    await fetchNow();
    register.serve({
      "/api/organisations": {
        json: {
          results: [
            entry("cabinet-office", "Cabinet Office", ids.cabinetOffice),
            entry("government-digital-service", "GDS", ids.gds, { parents: [parent("cabinet-office")] }),
            entry("old-office", "Old Office", ids.oldOffice, { status: "live", parents: [] }),
            entry("agency-x", "Agency X", ids.agency, { parents: [parent("cabinet-office")] }),
            entry("department-z", "Department Z", ids.department, { status: "closed" }),
          ],
        },
      },
    });
    const outcome = await fetchNow();
    expect(outcome).toMatchObject({ status: "fetched", pages: 1, organisations: 5, created: 0, updated: 4, unchanged: 1 });
    expect(outcome.status === "fetched" ? outcome.results.filter((result) => result.outcome === "updated").map((result) => [result.slug, result.message]) : []).toEqual([
      ["government-digital-service", "changed: name"],
      ["old-office", "changed: parent, closed"],
      ["agency-x", "changed: parent"],
      ["department-z", "changed: slug, name, closed"],
    ]);
    expect(await stored()).toEqual([
      ["agency-x", "Agency X", "cabinet-office", false],
      ["cabinet-office", "Cabinet Office", null, false],
      ["department-z", "Department Z", null, true],
      ["government-digital-service", "GDS", "cabinet-office", false],
      ["old-office", "Old Office", null, false],
    ]);
  });

  it("changes nothing when a page is malformed or cannot be fetched, counts it on /metrics and logs why without the query", async () => {
    await existingOrganisations();
    const before = await stored();
    const key = "?key=do-not-log-me";
    const keyed: SignonContext = { ...ctx, config: { ...ctx.config, organisationRegister: { ...ctx.config.organisationRegister, url: `${feedUrl}${key}` } } };
    const feed = goodFeed();
    const page1 = { "/api/organisations?key=do-not-log-me": feed["/api/organisations"] as RegisterAnswer };
    const other = "http://localhost:9/elsewhere";
    const cases: [string, Record<string, RegisterAnswer>, string][] = [
      ["not JSON", { "/api/organisations?page=2": { text: '{"results": [' } }, "page 2: the answer is not JSON"],
      ["no results list", { "/api/organisations?page=2": { json: { results: { "0": {} } } } }, 'page 2: a page is a JSON object with a list "results"'],
      ["an item without a slug", { "/api/organisations?page=2": { json: { results: [{ title: "Nameless", details: { govuk_status: "live" } }] } } }, 'page 2: item 1 has no "details.slug"'],
      ["a slug no import accepts", { "/api/organisations?page=2": { json: { results: [entry("Not A Slug", "Bad", ids.agency)] } } }, "1 organisation(s) cannot be applied: Not A Slug (page 2, item 1): A slug is up to 100 lower-case letters and digits separated by single hyphens"],
      ["HTTP 500", { "/api/organisations?page=2": { text: "oops", status: 500 } }, "page 2: answered HTTP 500"],
      ["a redirect to another host", { "/api/organisations?page=2": { text: "", status: 302, headers: { location: `${other}?page=2` } } }, "page 2: redirected to another host (localhost:9); only http://127.0.0.1"],
      ["a next page on another host", { "/api/organisations?page=2": { json: { results: [], next_page_url: other } } }, "page 2 links to a page on another host (localhost:9)"],
      ["a next page that repeats an earlier one", { "/api/organisations?page=2": { json: { results: [], next_page_url: `${feedUrl}${key}` } } }, "page 2 links back to page 1"],
      ["a page that is too large", { "/api/organisations?page=2": { text: JSON.stringify({ results: [], padding: "x".repeat(2100 * 1024) }) } }, "page 2: larger than 2048 KiB (SIGNON_ORGANISATION_REGISTER_MAX_PAGE_KIB)"],
    ];
    let failures = 0;
    for (const [name, page2, error] of cases) {
      register.serve({ ...page1, ...page2 });
      const { lines, log } = logged();
      const outcome = await fetchNow(log, keyed);
      failures += 1;
      expect(outcome, name).toMatchObject({ status: "failed", register: feedUrl });
      expect(outcome.status === "failed" ? outcome.error : "", name).toContain(error);
      expect(await stored(), name).toEqual(before);
      expect(lines, name).toEqual([expect.stringMatching(new RegExp(`^error: Organisation register ${feedUrl}: the fetch failed and changed nothing: `))]);
      expect(lines.join("\n"), name).not.toContain("do-not-log-me");
      const text = await metrics();
      expect(sample(text, "signon_organisation_register_fetch_failures_total"), name).toBe(failures);
      expect(sample(text, "signon_organisation_register_consecutive_failures"), name).toBe(failures);
      expect(sample(text, "signon_organisation_register_last_success_timestamp_seconds"), name).toBe(0);
    }
    const state = await readRegisterState(database.db);
    expect(JSON.stringify(state)).not.toContain("do-not-log-me");
    expect(await database.db.select().from(auditEvents).where(eq(auditEvents.action, "organisation_register_fetched"))).toEqual([]);

    // More pages than the bound: the third is never asked for.
    register.serve(goodFeed());
    const bounded: SignonContext = { ...ctx, config: { ...ctx.config, organisationRegister: { ...ctx.config.organisationRegister, maxPages: 2 } } };
    expect(await fetchNow(undefined, bounded)).toMatchObject({ status: "failed", error: "the feed has more than 2 pages (SIGNON_ORGANISATION_REGISTER_MAX_PAGES)" });
    expect(register.requests).toEqual(["/api/organisations", "/api/organisations?page=2"]);
    expect(await stored()).toEqual(before);

    // The next fetch that succeeds ends the run of failures.
    register.serve(goodFeed());
    expect(await fetchNow()).toMatchObject({ status: "fetched" });
    const text = await metrics();
    expect(sample(text, "signon_organisation_register_fetch_failures_total")).toBe(failures + 1);
    expect(sample(text, "signon_organisation_register_consecutive_failures")).toBe(0);
  });

  it("refuses a loop of parents, in the feed or with an organisation it leaves out, naming them, and changes nothing", async () => {
    await existingOrganisations();
    const before = await stored();
    register.serve({
      "/api/organisations": {
        json: {
          results: [
            entry("fine", "Fine", "11111111-1111-4111-8111-111111111111"),
            entry("loop-a", "Loop A", "22222222-2222-4222-8222-222222222222", { parents: [parent("loop-b")] }),
            entry("loop-b", "Loop B", "33333333-3333-4333-8333-333333333333", { parents: [parent("loop-a")] }),
            entry("under-loop", "Under Loop", "44444444-4444-4444-8444-444444444444", { parents: [parent("loop-a")] }),
          ],
        },
      },
    });
    const outcome = await fetchNow();
    expect(outcome).toEqual({
      status: "failed",
      register: feedUrl,
      error:
        "3 organisation(s) cannot be applied: loop-a (page 1, item 2): Its parents form a loop; loop-b (page 1, item 3): Its parents form a loop; " +
        "under-loop (page 1, item 4): Its parent loop-a is on a loop of parents, or under one",
      invalid: [
        { slug: "loop-a", page: 1, item: 2, outcome: "invalid", message: "Its parents form a loop" },
        { slug: "loop-b", page: 1, item: 3, outcome: "invalid", message: "Its parents form a loop" },
        { slug: "under-loop", page: 1, item: 4, outcome: "invalid", message: "Its parent loop-a is on a loop of parents, or under one" },
      ],
    } satisfies RegisterFetchOutcome);
    expect(await stored()).toEqual(before);

    // The hand-made organisation sits under the old office; the feed puts the old office under it.
    const [handMade] = await database.db.select().from(organisations).where(eq(organisations.slug, "hand-made"));
    const [oldOffice] = await database.db.select().from(organisations).where(eq(organisations.slug, "old-office"));
    await database.db.update(organisations).set({ parentId: oldOffice?.id ?? null }).where(eq(organisations.id, handMade?.id ?? ""));
    const moved = await stored();
    register.serve({ "/api/organisations": { json: { results: [entry("old-office", "Old Office", ids.oldOffice, { parents: [parent("hand-made")] })] } } });
    expect(await fetchNow()).toMatchObject({
      status: "failed",
      error: "1 organisation(s) cannot be applied: old-office (page 1, item 1): That organisation is under this one: choose one that is not, so the tree has no loop",
    });
    expect(await stored()).toEqual(moved);
  });

  it("gives up on a page that does not answer within the timeout, headers or body, and changes nothing", async () => {
    await existingOrganisations();
    const before = await stored();
    for (const stall of ["headers", "body"] as const) {
      register.serve({ "/api/organisations": goodFeed()["/api/organisations"] as RegisterAnswer, "/api/organisations?page=2": { stall } });
      const outcome = await fetchNow();
      expect(outcome, stall).toMatchObject({ status: "failed", error: "page 2: no complete answer within 1 s (SIGNON_ORGANISATION_REGISTER_TIMEOUT_SECONDS)" });
      expect(register.requests, stall).toEqual(["/api/organisations", "/api/organisations?page=2"]);
      expect(await stored(), stall).toEqual(before);
    }
    expect(sample(await metrics(), "signon_organisation_register_fetch_failures_total")).toBe(2);
  });
});

describe("one fetch at a time", () => {
  it("lets one of two runners at once fetch (this process and the command line): the register sees each page once", async () => {
    // The command line reads the real clock: this process's runner reads the same time.
    signon.clock.set(new Date());
    const feed = goodFeed();
    // Slow pages, so that the two overlap.
    register.serve(Object.fromEntries(Object.entries(feed).map(([path, answer]) => [path, { ...answer, delayMs: 300 }])));
    const [here, there] = await Promise.all([
      fetchOrganisationRegister(ctx, { force: false }),
      runSignonCli(database.url, ["organisations", "fetch-register", "--json"], registerEnv),
    ]);
    const cli = JSON.parse(there.stdout) as { status: string };
    expect([here.status, cli.status].sort()).toEqual(["busy", "fetched"]);
    expect(register.requests).toEqual(["/api/organisations", "/api/organisations?page=2", "/api/organisations?page=3"]);
    expect((await stored()).map((row) => row[0])).toEqual(["agency-x", "cabinet-office", "department-y", "government-digital-service", "old-office"]);

    // Once done, a scheduled run is not due until the interval has passed; a forced one runs.
    register.serve(goodFeed());
    expect(await fetchOrganisationRegister(ctx, { force: false })).toEqual({ status: "not_due", register: feedUrl });
    expect(register.requests).toEqual([]);
    signon.clock.advance(24 * 3600);
    expect(await fetchOrganisationRegister(ctx, { force: false })).toMatchObject({ status: "fetched", unchanged: 5 });
  });

  it("waits out the lease of a fetch that died, no longer than twice the page timeout and five minutes, and refuses that fetch's renewal after", async () => {
    // A fetch that took its lease and then died with its process.
    const died = { token: "6d2f0a57-0c1e-4f55-9d43-2b1f0e6c7a10", now: ctx.now(), leaseUntil: new Date(ctx.now().getTime() + 2 * 1000 + 300_000), due: null };
    expect(await claimRegisterFetch(database.db, died)).toBe(true);
    register.serve(goodFeed());
    signon.clock.advance(300);
    expect(await fetchNow()).toEqual({ status: "busy", register: feedUrl });
    expect(register.requests).toEqual([]);
    signon.clock.advance(3);
    expect(await fetchNow()).toMatchObject({ status: "fetched", created: 5 });
    // Had it come back, it could not renew the lease, and would stop.
    expect(await extendRegisterLease(database.db, died.token, ctx.now())).toBe(false);
    expect((await readRegisterState(database.db)).leaseUntil).toBeNull();
  });

  it("runs on the job schedule in two instances at once, and only one of them fetches", async () => {
    register.serve(Object.fromEntries(Object.entries(goodFeed()).map(([path, answer]) => [path, { ...answer, delayMs: 100 }])));
    // A second instance: its own connections to the same database.
    const other = await openSignonDatabase({ ...ctx.config, databaseUrl: database.url });
    const otherCtx: SignonContext = { db: other.db, statements: statementRunner(other.pool, false), config: ctx.config, now: ctx.now };
    const lines: string[] = [];
    const log = { info: (message: string) => lines.push(`info: ${message}`), error: (message: string) => lines.push(`error: ${message}`) };
    const jobs = [startOrganisationRegisterJob(ctx, { log, firstRunMs: 10 }), startOrganisationRegisterJob(otherCtx, { log, firstRunMs: 10 })];
    try {
      await expect.poll(async () => (await readRegisterState(database.db)).lastSuccessAt, { timeout: 10_000 }).not.toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(register.requests).toHaveLength(3);
      expect(lines).toEqual([`info: Organisation register ${feedUrl}: fetched 5 organisation(s) on 3 page(s): created 5, updated 0, 0 unchanged`]);
    } finally {
      for (const job of jobs) await job?.stop();
      await other.close();
    }
    expect(startOrganisationRegisterJob({ ...ctx, config: testConfig() }, { log })).toBeNull();
  });
});

describe("signon organisations fetch-register", () => {
  it("prints what changed, or why nothing did (exit code 1)", async () => {
    await existingOrganisations();
    register.serve(goodFeed());
    const run = await runSignonCli(database.url, ["organisations", "fetch-register"], registerEnv);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout.split("\n")).toEqual([
      "updated\tcabinet-office\tchanged: name",
      "created\tgovernment-digital-service",
      "updated\told-office\tchanged: parent, closed",
      "created\tagency-x",
      "updated\tdepartment-y\tchanged: content id",
      `Fetched 5 organisation(s) on 3 page(s) from ${feedUrl}: created 2, updated 3, left 0 unchanged; none deleted.`,
      "",
    ]);
    const again = await runSignonCli(database.url, ["organisations", "fetch-register", "--json"], registerEnv);
    expect(JSON.parse(again.stdout)).toEqual({ status: "fetched", register: feedUrl, pages: 3, organisations: 5, counts: { created: 0, updated: 0, unchanged: 5 }, changes: [] });

    register.serve({ "/api/organisations": { json: { results: [entry("loop-a", "A", ids.agency, { parents: [parent("loop-b")] }), entry("loop-b", "B", ids.gds, { parents: [parent("loop-a")] })] } } });
    const refused = await runSignonCli(database.url, ["organisations", "fetch-register"], registerEnv);
    expect(refused.code).toBe(1);
    expect(refused.stdout.split("\n")).toEqual([
      "page 1 item 1\tinvalid\tloop-a\tIts parents form a loop",
      "page 1 item 2\tinvalid\tloop-b\tIts parents form a loop",
      `The fetch from ${feedUrl} failed and changed nothing: 2 organisation(s) cannot be applied: loop-a (page 1, item 1): Its parents form a loop; loop-b (page 1, item 2): Its parents form a loop`,
      "",
    ]);

    const unset = await runSignonCli(database.url, ["organisations", "fetch-register"]);
    expect(unset).toMatchObject({ code: 1, stderr: "signon: No organisation register is configured: set SIGNON_ORGANISATION_REGISTER_URL\n" });
  });

  it("does what Sign-on's README says of its worked example", async () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("### Organisations from a register"), readme.indexOf("\n## ", readme.indexOf("### Organisations from a register")));
    const blocks = [...section.matchAll(/```(json)?\n([\s\S]*?)```/g)].map((match) => match[2]?.replaceAll("https://register.example", register.origin) ?? "");
    const [page1, page2, printed] = blocks;
    register.serve({ "/api/organisations": { text: page1 ?? "" }, "/api/organisations?page=2": { text: page2 ?? "" } });
    const run = await runSignonCli(database.url, ["organisations", "fetch-register"], registerEnv);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toBe(printed);
    expect(await stored()).toEqual([
      ["cabinet-office", "Cabinet Office", null, false],
      ["government-digital-service", "Government Digital Service", "cabinet-office", false],
      ["office-of-things-past", "Office of Things Past", "cabinet-office", true],
    ]);
    expect(JSON.parse((await runSignonCli(database.url, ["organisations", "fetch-register", "--json"], registerEnv)).stdout)).toMatchObject({ counts: { created: 0, updated: 0, unchanged: 3 } });
  });
});

describe("GET /organisations with a register", () => {
  it("says where organisations come from, when they were last fetched and why the latest fetch failed", async () => {
    signon.clock.set(new Date("2026-01-15T09:00:00Z"));
    const admin = await createUser(ctx, { role: "superadmin" });
    const browser = await signedInBrowser(signon.app, admin.email, defaultPassword);
    expect((await browser.get("/organisations")).body).toContain("Not fetched yet.");
    register.serve(goodFeed());
    await fetchNow();
    let page = (await browser.get("/organisations")).body;
    expect(page).toContain(`Organisations come from the register at <code>${feedUrl}</code>, fetched every 24 hours.`);
    expect(page).toMatch(/Last fetched <time datetime="[^"]+">2026-01-15 09:00 UTC<\/time>: 5 organisations, 5 created, 0 updated\./);
    expect(page).not.toContain("failed and changed nothing");
    register.serve({});
    signon.clock.advance(60);
    await fetchNow();
    page = (await browser.get("/organisations")).body;
    expect(page).toContain("2026-01-15 09:00 UTC</time>: 5 organisations");
    expect(page).toMatch(/The latest fetch, <time datetime="[^"]+">2026-01-15 09:01 UTC<\/time>, failed and changed nothing:<\/strong> page 1: answered HTTP 404/);
  });
});

describe("SIGNON_ORGANISATION_REGISTER_URL", () => {
  it("must be https, but for http on a loopback host in development, and carry no credentials", () => {
    expect(testConfig({ SIGNON_ORGANISATION_REGISTER_URL: "https://www.gov.uk/api/organisations" }).organisationRegister).toEqual({
      url: "https://www.gov.uk/api/organisations",
      intervalMs: 24 * 3600_000,
      pageTimeoutMs: 10_000,
      maxPages: 100,
      maxPageBytes: 2048 * 1024,
    });
    expect(testConfig().organisationRegister.url).toBeNull();
    const refused: [Record<string, string>, string][] = [
      [{ SIGNON_ORGANISATION_REGISTER_URL: "http://register.example/api" }, "SIGNON_ORGANISATION_REGISTER_URL: must use https"],
      [{ SIGNON_ORGANISATION_REGISTER_URL: "https://user:secret@register.example/api" }, "SIGNON_ORGANISATION_REGISTER_URL: must not carry credentials"],
      [{ SIGNON_ORGANISATION_REGISTER_URL: "register.example" }, "SIGNON_ORGANISATION_REGISTER_URL: not an absolute URL"],
      [{ SIGNON_ORGANISATION_REGISTER_INTERVAL_MINUTES: "0" }, "SIGNON_ORGANISATION_REGISTER_INTERVAL_MINUTES: expected 1 to 44640, got 0"],
      [{ SIGNON_ORGANISATION_REGISTER_TIMEOUT_SECONDS: "ten" }, "SIGNON_ORGANISATION_REGISTER_TIMEOUT_SECONDS: expected a whole number, got ten"],
    ];
    for (const [env, message] of refused) expect(() => testConfig(env), message).toThrow(message);
    expect(() =>
      testConfig({ NODE_ENV: "production", SIGNON_TRUST_PROXY: "true", SIGNON_PUBLIC_URL: "https://signon.example", SIGNON_ORGANISATION_REGISTER_URL: "http://127.0.0.1:8080/api" }),
    ).toThrow("SIGNON_ORGANISATION_REGISTER_URL: must use https in production");
  });
});
