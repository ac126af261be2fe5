// Sign-on at 1k, 100k and 1M people: the users list's reads (page 1, a deep page, the last page, a name search,
// an exact e-mail, each filter) as p50 / p99 over HTTP against the real service, users.csv (time, first byte,
// RSS growth of the server), and EXPLAIN ANALYZE of the three slowest reads' queries.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench -- scale
//
// BENCH_SCALE_PEOPLE: the sizes, comma-separated (default 1000,100000,1000000).
// BENCH_SCALE_SAMPLES: requests measured per read and size (default 40, after 3 to warm up).
// BENCH_SCALE_SEMI_SPACE_MB: the server's young generation (default Node's own, as in production).
// BENCH_SCALE_OLD_SPACE_MB: the server's heap ceiling (default 512, as docs/deployment.md runs it; 0 for Node's own).
// BENCH_SCALE_SIGNON_DATABASE: the database created on that server for the run and dropped after it
// (default tessera_bench_scale_signon).
// BENCH_SCALE_COMBINATIONS: random combinations of every filter drawn at the largest size (default 200; 0: none),
// each with 3 requests to warm up and BENCH_SCALE_COMBINATION_SAMPLES (default 10) timed; BENCH_SCALE_SEED seeds
// the draws (default 1). Any combination whose p99 is over 200 ms makes the run end with exit code 1.
// BENCH_SCALE_KEEP=1: keep the generated database after the run and reuse it when it holds as many people
// (for repeated runs while working on a read; a size's generation takes minutes at 1M).
import { createDrizzle, createPool, runMigrations, withStatementTimeout } from "@tessera/db";
import { dropDatabase, recreateDatabase } from "@tessera/db/testing";
import { loadConfig, signonMigrations } from "@tessera/signon";
import { sql, type SQLWrapper } from "drizzle-orm";
import { readFileSync } from "node:fs";
import { exactCountLimit, resolvedSearch, type UserFilters } from "../../packages/signon/src/accounts/user-search.js";
import * as schema from "../../packages/signon/src/db/schema.js";
import { statementRunner } from "../../packages/signon/src/db/statements.js";
import { encodeRowKey, type PagePosition, type RowKey } from "../../packages/signon/src/repositories/keyset.js";
import type { SignonDatabase } from "../../packages/signon/src/db/database.js";
import { inCountTransaction, inPageTransaction, userCountQuery, userPageQuery } from "../../packages/signon/src/repositories/user-search.js";
import type { Actor } from "../../packages/signon/src/web/policy.js";
import { generatePeople, type GeneratedPeople } from "../../packages/signon/test/support/generated-people.js";
import { describeCombination, drawCombinations, explainAnalyze, verdict, type Combination } from "./combinations.js";
import { forkSide, stopSide } from "../support/forked-side.js";
import type { ScaleServer } from "./signon-serve.js";

const serverUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const databaseName = process.env.BENCH_SCALE_SIGNON_DATABASE || "tessera_bench_scale_signon";
const sizes = (process.env.BENCH_SCALE_PEOPLE || "1000,100000,1000000").split(",").map(Number);
const samples = Number(process.env.BENCH_SCALE_SAMPLES || 40);
const combinationCount = Number(process.env.BENCH_SCALE_COMBINATIONS ?? 200);
const combinationSamples = Number(process.env.BENCH_SCALE_COMBINATION_SAMPLES || 10);
const seed = Number(process.env.BENCH_SCALE_SEED || 1);
const keep = process.env.BENCH_SCALE_KEEP === "1";
/** The users list's goal at every size, for every combination of filters: p99 at most this, over HTTP. */
const goalP99Ms = 200;
/** How many of the slowest combinations are printed with their plans. */
const slowestShown = 10;
/** How many of the slowest reads at each size get EXPLAIN ANALYZE. */
const explainedReads = 3;
// The server runs as docs/deployment.md runs it in production: Node's own young generation, and a heap
// ceiling of BENCH_SCALE_OLD_SPACE_MB (default 512, as documented; 0 for Node's own, which lets the export's
// garbage pile up before a full collection). BENCH_SCALE_SEMI_SPACE_MB=2 gives it the smaller young
// generation of `npm start` (which trades a larger RSS growth during the export, as the batches waiting for
// the client move to the old generation, for a smaller RSS at rest).
const semiSpaceMiB = process.env.BENCH_SCALE_SEMI_SPACE_MB;
const oldSpaceMiB = Number(process.env.BENCH_SCALE_OLD_SPACE_MB ?? 512);
const serverOptions = [...(semiSpaceMiB ? [`--max-semi-space-size=${semiSpaceMiB}`] : []), ...(oldSpaceMiB > 0 ? [`--max-old-space-size=${oldSpaceMiB}`] : [])];
if (serverOptions.length > 0) process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, ...serverOptions].filter(Boolean).join(" ");

interface Read {
  label: string;
  filters: Partial<UserFilters>;
  position: PagePosition;
  /** Read as `users.csv` with these filters rather than as the page. */
  csv?: boolean;
}

interface Measured {
  p50: number;
  p99: number;
}

/** A signed-in browser over HTTP: a cookie jar. */
class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly origin: string) {}

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set("cookie", [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    const response = await fetch(new URL(path, this.origin), { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const equals = pair.indexOf("=");
      this.cookies.set(pair.slice(0, equals).trim(), pair.slice(equals + 1).trim());
    }
    return response;
  }

  async signIn(email: string, password: string): Promise<void> {
    const page = await (await this.fetch("/sign-in")).text();
    const csrf = /name="_csrf" value="([^"]*)"/.exec(page)?.[1];
    if (csrf === undefined) throw new Error("no sign-in form");
    const response = await this.fetch("/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf.replaceAll("&amp;", "&"), email, password }).toString(),
    });
    if (response.status !== 303) throw new Error(`sign-in answered ${response.status}`);
    await response.arrayBuffer();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

function pathOf(read: Read, base = "/users"): string {
  const params = new URLSearchParams();
  const names: [keyof UserFilters, string][] = [
    ["text", "q"],
    ["role", "role"],
    ["organisation", "organisation"],
    ["status", "status"],
    ["permission", "permission"],
    ["twoStep", "two_step"],
  ];
  for (const [field, name] of names) if (read.filters[field]) params.set(name, read.filters[field] as string);
  if (read.position.kind === "after") params.set("after", encodeRowKey(read.position.key));
  if (read.position.kind === "last") params.set("last", "yes");
  const query = params.toString();
  return query === "" ? base : `${base}?${query}`;
}

async function measure(browser: Browser, path: string, timedRequests = samples): Promise<Measured> {
  const times: number[] = [];
  for (let i = 0; i < timedRequests + 3; i++) {
    const started = performance.now();
    const response = await browser.fetch(path);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    if (i >= 3) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** What a page said of its count, against the truth: an estimate's worst ratio either way, or a "more than" that was not. */
interface EstimateCheck {
  label: string;
  shown: string;
  truth: number;
  /** max(shown / truth, truth / shown) for an estimate; 1 for an exact count or a "more than" that holds. */
  ratio: number;
}

/** Largest error an estimate the list shows may have, either way. */
const estimateGoalRatio = 2;

/** Reads the count the page at `path` shows and counts the truth with SQL (no time limit). */
async function checkCount(browser: Browser, db: ReturnType<typeof createDrizzle<typeof schema>>, pool: ReturnType<typeof createPool>, url: string, label: string, path: string, filters: Partial<UserFilters>): Promise<EstimateCheck> {
  const text = await (await browser.fetch(path)).text();
  const config = loadConfig({ DATABASE_URL: url, SIGNON_TWO_STEP_REQUIRED_ROLES: "none" });
  const ctx = { db, statements: statementRunner(pool, false), config, now: () => new Date() };
  const actor: Actor = { uid: "00000000-0000-4000-8000-000000000000", role: "superadmin", organisationId: null };
  const search = await resolvedSearch(ctx, actor, { text: "", role: "", organisation: "", status: "", permission: "", twoStep: "", ...filters });
  // The truth: every match counted, the text through its trigram indexes (or the whole address the list found).
  const truthPlan = { text: search.plan.text === "exact-address" ? "exact-address" : "trigram", permission: "holders" } as const;
  const counted = await db.execute<{ count: number }>(userCountQuery(db, search.search, truthPlan, 100_000_000));
  const truth = counted.rows[0]?.count ?? 0;
  const about = /About ([\d,]+) people match/.exec(text);
  const moreThan = /More than ([\d,]+) people match/.exec(text);
  const exact = /(\d[\d,]*) (?:people match|person matches)\./.exec(text);
  const number = (match: RegExpExecArray) => Number((match[1] as string).replaceAll(",", ""));
  if (about) {
    const shown = number(about);
    return { label, shown: `about ${shown.toLocaleString("en-GB")}`, truth, ratio: Math.max(shown / Math.max(truth, 1), truth / Math.max(shown, 1)) };
  }
  if (moreThan) return { label, shown: `more than ${number(moreThan).toLocaleString("en-GB")}`, truth, ratio: truth > number(moreThan) ? 1 : Infinity };
  if (exact) return { label, shown: number(exact).toLocaleString("en-GB"), truth, ratio: number(exact) === truth ? 1 : Infinity };
  return { label, shown: "no count on the page", truth, ratio: Infinity };
}

/** The estimate lines of the report; exit code 1 when one is off by more than `estimateGoalRatio` or a count is wrong. */
function estimateReport(checks: EstimateCheck[]): string[] {
  const worst = [...checks].sort((a, b) => b.ratio - a.ratio);
  const estimates = checks.filter((check) => check.shown.startsWith("about"));
  const bad = checks.filter((check) => check.ratio > estimateGoalRatio);
  if (bad.length > 0) process.exitCode = 1;
  return [
    `\nCounts the list showed against the truth (${checks.length} reads; ${estimates.length} estimates)\n`,
    "| Read | Shown | True count | Ratio |",
    "|---|---|---|---|",
    ...worst.slice(0, 10).map((check) => `| ${check.label} | ${check.shown} | ${check.truth.toLocaleString("en-GB")} | ${Number.isFinite(check.ratio) ? check.ratio.toFixed(2) : "wrong"} |`),
    bad.length === 0
      ? `Every count exact or true, every estimate within ${estimateGoalRatio}× of the truth.`
      : `FAILED: ${bad.length} counts wrong or estimates off by more than ${estimateGoalRatio}×.`,
  ];
}

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

/** Downloads users.csv whole, sampling the server's RSS every 10 ms. */
async function measureCsv(browser: Browser, pid: number): Promise<{ seconds: number; firstByteMs: number; rows: number; rssGrowthMiB: number }> {
  global.gc?.();
  const before = rssKiB(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(pid))), 10);
  const started = performance.now();
  const response = await browser.fetch("/users.csv");
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let firstByteMs = 0;
  let lines = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (firstByteMs === 0) firstByteMs = performance.now() - started;
    for (let at = value.indexOf(10); at !== -1; at = value.indexOf(10, at + 1)) lines++;
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, rssKiB(pid));
  return { seconds, firstByteMs, rows: lines - 1, rssGrowthMiB: (peak - before) / 1024 };
}

const format = (ms: number) => (ms < 10 ? ms.toFixed(1) : ms.toFixed(0));

export async function run(): Promise<void> {
  const table = new Map<string, Map<number, string>>();
  const record = (label: string, size: number, value: string) => {
    const row = table.get(label) ?? new Map<number, string>();
    row.set(size, value);
    table.set(label, row);
  };
  const explained: string[] = [];
  let combinationReport: string[] = [];

  try {
    for (const size of sizes) {
      const kept = keep ? await keptDatabase(size) : null;
      const url = kept?.url ?? (await recreateDatabase(serverUrl, databaseName));
      const pool = createPool({ url, max: 4, statementTimeoutMs: null });
      const db = createDrizzle(pool, schema);
      let generated: GeneratedPeople;
      if (kept) {
        generated = kept.generated;
        // Migrations added since the database was kept.
        await runMigrations(pool, [signonMigrations]);
        console.log(`${size.toLocaleString("en-GB")} people: reusing ${databaseName} (BENCH_SCALE_KEEP=1)`);
      } else {
        const generationStarted = performance.now();
        await runMigrations(pool, [signonMigrations]);
        generated = await withStatementTimeout(null, () => generatePeople(db, size, 100_000));
        await db.execute(sql`vacuum analyze signon.users`);
        await db.execute(sql`vacuum analyze signon.user_permissions`);
        await db.execute(sql`checkpoint`);
        console.log(`${size.toLocaleString("en-GB")} people generated in ${((performance.now() - generationStarted) / 1000).toFixed(1)} s`);
      }

      const [middle] = (
        await db.execute<{ text: string; uid: string }>(
          sql`select lower(name) as text, uid from signon.users where not is_api_user order by lower(name), uid offset ${Math.floor(size / 2)} limit 1`,
        )
      ).rows;
      const organisation = generated.organisationIds[7] as string;
      const reads: Read[] = [
        { label: "users list, page 1, no filter", filters: {}, position: { kind: "first" } },
        { label: "users list, deep page (after the middle person)", filters: {}, position: { kind: "after", key: middle as RowKey } },
        { label: "users list, last page", filters: {}, position: { kind: "last" } },
        { label: "users list, name search `smith`", filters: { text: "smith" }, position: { kind: "first" } },
        { label: "users list, exact e-mail search", filters: { text: generated.someEmail }, position: { kind: "first" } },
        { label: "filter role = organisation admin", filters: { role: "organisation_admin" }, position: { kind: "first" } },
        { label: "filter organisation", filters: { organisation }, position: { kind: "first" } },
        { label: "filter status = active", filters: { status: "active" }, position: { kind: "first" } },
        { label: "filter status = suspended", filters: { status: "suspended" }, position: { kind: "first" } },
        { label: "filter status = locked", filters: { status: "locked" }, position: { kind: "first" } },
        { label: "filter status = invited", filters: { status: "invited" }, position: { kind: "first" } },
        { label: "filter permission signin (half)", filters: { permission: `${generated.applicationId}:signin` }, position: { kind: "first" } },
        { label: "filter permission editor (1 in 200)", filters: { permission: `${generated.applicationId}:editor` }, position: { kind: "first" } },
        { label: "filter 2-step on", filters: { twoStep: "on" }, position: { kind: "first" } },
        { label: "filter 2-step missing", filters: { twoStep: "missing" }, position: { kind: "first" } },
        { label: "filter 2-step exempt", filters: { twoStep: "exempt" }, position: { kind: "first" } },
        { label: "name search `smith` and status = suspended", filters: { text: "smith", status: "suspended" }, position: { kind: "first" } },
        { label: "search `e` (one letter most hold)", filters: { text: "e" }, position: { kind: "first" } },
        { label: "search `ж` (one letter nobody holds)", filters: { text: "ж" }, position: { kind: "first" } },
        { label: "search `qz` (two letters nobody holds)", filters: { text: "qz" }, position: { kind: "first" } },
        { label: "search `qz` and permission signin", filters: { text: "qz", permission: `${generated.applicationId}:signin` }, position: { kind: "first" } },
        { label: "search `qz` and status = active", filters: { text: "qz", status: "active" }, position: { kind: "first" } },
        { label: "search `qzx` (three letters nobody holds)", filters: { text: "qzx" }, position: { kind: "first" } },
        { label: "search `sm` and no organisation", filters: { text: "sm", organisation: "none" }, position: { kind: "first" } },
        { label: "search `example` and no organisation, role normal", filters: { text: "example", organisation: "none", role: "normal" }, position: { kind: "first" } },
        { label: "search `org` (the e-mail domain only)", filters: { text: "org" }, position: { kind: "first" } },
        { label: "`users.csv` of search `qz` (nobody)", filters: { text: "qz" }, position: { kind: "first" }, csv: true },
      ];

      const side = await forkSide<ScaleServer>(new URL("./signon-serve.ts", import.meta.url), [url]);
      try {
        const browser = new Browser(side.prepared.url);
        await browser.signIn(side.prepared.email, side.prepared.password);
        const timed: { read: Read; p99: number }[] = [];
        const checks: EstimateCheck[] = [];
        for (const read of reads) {
          const measured = await measure(browser, pathOf(read, read.csv === true ? "/users.csv" : "/users"));
          record(read.label, size, `${format(measured.p50)} / ${format(measured.p99)} ms`);
          if (read.csv !== true) timed.push({ read, p99: measured.p99 });
          if (read.csv !== true && size === Math.max(...sizes)) checks.push(await checkCount(browser, db, pool, url, read.label, pathOf(read), read.filters));
          if (measured.p99 > goalP99Ms && size === Math.max(...sizes)) process.exitCode = 1;
        }
        if (size === Math.max(...sizes)) {
          for (const [label, path] of await otherPages(db, generated)) {
            const measured = await measure(browser, path);
            record(label, size, `${format(measured.p50)} / ${format(measured.p99)} ms`);
            if (measured.p99 > goalP99Ms) process.exitCode = 1;
          }
          // What administrators type and open beside the named reads (after otherPages made the big organisation).
          for (const read of administratorReads(generated)) {
            const measured = await measure(browser, pathOf(read));
            record(`typed: ${read.label}`, size, `${format(measured.p50)} / ${format(measured.p99)} ms`);
            timed.push({ read, p99: measured.p99 });
            checks.push(await checkCount(browser, db, pool, url, `typed: ${read.label}`, pathOf(read), read.filters));
            if (measured.p99 > goalP99Ms) process.exitCode = 1;
          }
        }
        const csv = await measureCsv(browser, side.child.pid as number);
        record(
          `\`users.csv\`, everyone (young generation: ${semiSpaceMiB ? `${semiSpaceMiB} MB semi-spaces` : "Node's own"}; heap ceiling: ${oldSpaceMiB > 0 ? `${oldSpaceMiB} MB` : "Node's own"})`,
          size,
          `${csv.seconds.toFixed(2)} s (${Math.round(csv.rows / csv.seconds).toLocaleString("en-GB")} rows/s), first byte ${format(csv.firstByteMs)} ms, RSS +${csv.rssGrowthMiB.toFixed(0)} MiB (${csv.rows.toLocaleString("en-GB")} rows)`,
        );
        if (size === Math.max(...sizes) && combinationCount > 0) {
          combinationReport = await measureCombinations(browser, db, pool, url, size, generated, checks);
        }
        if (size === Math.max(...sizes)) combinationReport.push(...estimateReport(checks));

        for (const slowest of timed.sort((a, b) => b.p99 - a.p99).slice(0, explainedReads)) {
          const config = loadConfig({ DATABASE_URL: url, SIGNON_TWO_STEP_REQUIRED_ROLES: "none" });
          const ctx = { db, statements: statementRunner(pool, false), config, now: () => new Date() };
          const actor: Actor = { uid: "00000000-0000-4000-8000-000000000000", role: "superadmin", organisationId: null };
          const filters: UserFilters = { text: "", role: "", organisation: "", status: "", permission: "", twoStep: "", ...slowest.read.filters };
          const search = await resolvedSearch(ctx, actor, filters);
          const show = async (title: string, query: SQLWrapper, on: Pick<SignonDatabase, "execute"> = db) => {
            const rows = (await on.execute<{ "QUERY PLAN": string }>(sql`explain (analyze, buffers) ${query}`)).rows;
            explained.push(`-- ${size.toLocaleString("en-GB")} people, slow read: ${slowest.read.label} (p99 ${format(slowest.p99)} ms): ${title}\n${rows.map((row) => row["QUERY PLAN"]).join("\n")}`);
          };
          explained.push(`-- the plan chosen: ${search.plan.reasons.join("; ")}`);
          await inPageTransaction(db, (tx) => show("the page", userPageQuery(tx, search.search, search.plan, slowest.read.position, 51), tx));
          await inCountTransaction(db, 60_000, (tx) => show(`the count (up to ${exactCountLimit.toLocaleString("en-GB")})`, userCountQuery(tx, search.search, search.plan, exactCountLimit), tx));
        }
      } finally {
        await stopSide(side.child);
        await pool.end();
      }
    }
  } finally {
    if (!keep) await dropDatabase(serverUrl, databaseName);
  }

  const header = `| Read | ${sizes.map((size) => `${size.toLocaleString("en-GB")} people`).join(" | ")} |`;
  console.log(`\nSign-on users list (p50 / p99 over HTTP, ${samples} requests each)\n`);
  console.log(header);
  console.log(`|---|${sizes.map(() => "---").join("|")}|`);
  for (const [label, row] of table) console.log(`| ${label} | ${sizes.map((size) => row.get(size) ?? "").join(" | ")} |`);
  console.log(`\nEXPLAIN ANALYZE of the ${explainedReads} slowest reads at each size\n`);
  for (const plan of explained) console.log(`${plan}\n`);
  for (const line of combinationReport) console.log(line);
}

/**
 * Reads an administrator makes that the generator does not name: punctuation every address holds, capitals, LIKE's
 * own characters, an emoji, a long text, letters nobody holds, the big organisation alone and its last page, rare
 * permissions beside common texts, and the shape that was slowest (no organisation, a status, a common permission).
 */
function administratorReads(generated: GeneratedPeople): Read[] {
  const big = generated.organisationIds[0] as string;
  const middling = generated.organisationIds[7] as string;
  const signin = `${generated.applicationId}:signin`;
  const editor = `${generated.applicationId}:editor`;
  const first: PagePosition = { kind: "first" };
  const reads: [string, Partial<UserFilters>, PagePosition?][] = [
    ["`.` (every address)", { text: "." }],
    ["`@` (every address)", { text: "@" }],
    ["`SMITH` in capitals", { text: "SMITH" }],
    ["`Ada` with a capital", { text: "Ada" }],
    ["`%`", { text: "%" }],
    ["`_`", { text: "_" }],
    ["`50%_off`", { text: "50%_off" }],
    ["an emoji", { text: "🙂" }],
    ["a 50-character text", { text: "margaret q. smith of the department for examples!!" }],
    ["`xq` (two letters nobody holds)", { text: "xq" }],
    ["`zz` and suspended", { text: "zz", status: "suspended" }],
    ["the big organisation alone", { organisation: big }],
    ["the big organisation, last page", { organisation: big }, { kind: "last" }],
    ["the big organisation, `.`", { organisation: big, text: "." }],
    ["the big organisation, suspended", { organisation: big, status: "suspended" }],
    ["an organisation of 9,500, signin", { organisation: middling, permission: signin }],
    ["editor and `a`", { permission: editor, text: "a" }],
    ["editor and `example`", { permission: editor, text: "example" }],
    ["editor, `smith`, active", { permission: editor, text: "smith", status: "active" }],
    ["no organisation, suspended, signin", { organisation: "none", status: "suspended", permission: signin }],
    ["`a`, no organisation, suspended, signin", { text: "a", organisation: "none", status: "suspended", permission: signin }],
    ["`e`, no organisation, invited, signin", { text: "e", organisation: "none", status: "invited", permission: signin }],
    ["`smith`, no organisation, suspended, signin", { text: "smith", organisation: "none", status: "suspended", permission: signin }],
    ["no organisation, 2-step on, signin", { organisation: "none", twoStep: "on", permission: signin }],
    ["`person1`, active, signin", { text: "person1", status: "active", permission: signin }],
    ["`.org`, 2-step missing", { text: ".org", twoStep: "missing" }],
    ["`example.com`, locked", { text: "example.com", status: "locked" }],
  ];
  return reads.map(([label, filters, position]) => ({ label, filters, position: position ?? first }));
}

/** People moved into the first generated organisation, so that one organisation has about 100,000 (and the same on every run). */
const bigOrganisationShare = 10;
/** Events of one person, and sign-ins to the application over the last year, for the pages that list them. */
const eventsEach = 500_000;

/**
 * The pages besides the users list that list or count people, organisations or events, at the largest size: the
 * organisations, an organisation of about 9,500 people and one of about 100,000 (each with its parent choices),
 * the API users, and the event log and usage pages of a person and an application with a million events between
 * them. Makes the large organisation and the events the first time (idempotent: a kept database keeps them).
 */
async function otherPages(db: ReturnType<typeof createDrizzle<typeof schema>>, generated: GeneratedPeople): Promise<[string, string][]> {
  const big = generated.organisationIds[0] as string;
  const middling = generated.organisationIds[7] as string;
  await db.execute(sql`
    update signon.users set organisation_id = ${big}::uuid
     where organisation_id is distinct from ${big}::uuid and (hashtext('big' || email) & 2147483647) % ${bigOrganisationShare} = 0`);
  const person = (await db.execute<{ uid: string }>(sql`select uid from signon.users where email = ${generated.someEmail}`)).rows[0]?.uid as string;
  const have = (await db.execute<{ n: number }>(sql`select count(*)::int as n from signon.audit_events where subject_uid = ${person}::uuid`)).rows[0]?.n ?? 0;
  if (have < eventsEach) {
    const started = performance.now();
    await db.execute(sql`
      insert into signon.audit_events (occurred_at, action, actor_uid, subject_uid, details)
      select now() - make_interval(secs => n * 60), (array['sign_in', 'password_changed', 'user_updated', 'token_issued_by_operator'])[1 + n % 4], ${person}::uuid, ${person}::uuid, '{}'::jsonb
        from generate_series(1, ${eventsEach}) n`);
    await db.execute(sql`
      insert into signon.audit_events (occurred_at, action, subject_uid, application_id, details)
      select now() - make_interval(secs => (k * 50000 + p.n) * 60), 'authorization_code_issued', p.uid, ${generated.applicationId}::uuid, '{}'::jsonb
        from generate_series(0, ${eventsEach / 50_000 - 1}) k
        cross join (select uid, row_number() over () as n from signon.users where not is_api_user limit 50000) p`);
    await db.execute(sql`vacuum analyze signon.audit_events`);
    // Written out now, so that the reads timed next do not share the machine with the checkpoint of these writes.
    await db.execute(sql`checkpoint`);
    console.log(`${(2 * eventsEach).toLocaleString("en-GB")} events generated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  await db.execute(sql`vacuum analyze signon.users`);
  return [
    ["`/organisations`", "/organisations"],
    ["an organisation's page (about 9,500 people; its parent choices)", `/organisations/${middling}`],
    ["an organisation's page (about 105,000 people; its parent choices)", `/organisations/${big}`],
    ["`/api-users`", "/api-users"],
    [`a person's event log (${eventsEach.toLocaleString("en-GB")} events)`, `/users/${person}/events`],
    [`an application's usage (${eventsEach.toLocaleString("en-GB")} sign-ins in a year)`, `/applications/${generated.applicationId}/usage`],
    ["an application's event log", `/applications/${generated.applicationId}/events`],
  ];
}

/** The kept database of an earlier run with BENCH_SCALE_KEEP=1, when it holds `size` people; else null. */
async function keptDatabase(size: number): Promise<{ url: string; generated: GeneratedPeople } | null> {
  const url = new URL(serverUrl);
  url.pathname = `/${databaseName}`;
  const pool = createPool({ url: url.toString(), max: 1, statementTimeoutMs: null });
  try {
    const people = await pool.query<{ n: number }>("select count(*)::int as n from signon.users where not is_api_user and email like 'person%'");
    if (people.rows[0]?.n !== size) return null;
    const organisations = await pool.query<{ id: string }>("select id from signon.organisations where slug like 'generated-%' order by created_at, slug");
    const application = await pool.query<{ id: string }>("select id from signon.applications order by created_at limit 1");
    const someone = await pool.query<{ email: string }>("select email from signon.users where email like 'person%' order by email limit 1");
    return {
      url: url.toString(),
      generated: { organisationIds: organisations.rows.map((row) => row.id), applicationId: application.rows[0]?.id ?? "", someEmail: someone.rows[0]?.email ?? "" },
    };
  } catch {
    return null;
  } finally {
    await pool.end();
  }
}

/** Times every drawn combination over HTTP, prints the slowest with their plans, and sets exit code 1 when one is over the goal. */
async function measureCombinations(
  browser: Browser,
  db: ReturnType<typeof createDrizzle<typeof schema>>,
  pool: ReturnType<typeof createPool>,
  url: string,
  size: number,
  generated: GeneratedPeople,
  checks: EstimateCheck[],
): Promise<string[]> {
  const combinations = drawCombinations(seed, combinationCount, generated);
  const timed: { combination: Combination; measured: Measured }[] = [];
  for (const combination of combinations) {
    const read: Read = { label: "", filters: combination.filters, position: combination.position };
    timed.push({ combination, measured: await measure(browser, pathOf(read), combinationSamples) });
    checks.push(await checkCount(browser, db, pool, url, describeCombination(combination, generated.organisationIds), pathOf(read), combination.filters));
  }
  timed.sort((a, b) => b.measured.p99 - a.measured.p99);
  const over = timed.filter(({ measured }) => measured.p99 > goalP99Ms);
  const p99s = timed.map(({ measured }) => measured.p99).sort((a, b) => a - b);
  const lines = [
    `\nUsers list, ${combinations.length} random combinations of every filter at ${size.toLocaleString("en-GB")} people (seed ${seed}; 3 warm-ups and ${combinationSamples} timed requests each)`,
    `p99 over the combinations: median ${format(percentile(p99s, 50))} ms, slowest ${format(p99s.at(-1) ?? 0)} ms; over ${goalP99Ms} ms: ${over.length}\n`,
    `The ${slowestShown} slowest:\n`,
    "| Combination | p50 / p99 |",
    "|---|---|",
    ...timed.slice(0, slowestShown).map(({ combination, measured }) => `| ${describeCombination(combination, generated.organisationIds)} | ${format(measured.p50)} / ${format(measured.p99)} ms |`),
    "",
  ];
  const config = loadConfig({ DATABASE_URL: url, SIGNON_TWO_STEP_REQUIRED_ROLES: "none" });
  const ctx = { db, statements: statementRunner(pool, false), config, now: () => new Date() };
  const actor: Actor = { uid: "00000000-0000-4000-8000-000000000000", role: "superadmin", organisationId: null };
  for (const { combination, measured } of timed.slice(0, slowestShown)) {
    const filters: UserFilters = { text: "", role: "", organisation: "", status: "", permission: "", twoStep: "", ...combination.filters };
    const search = await resolvedSearch(ctx, actor, filters);
    lines.push(`-- ${describeCombination(combination, generated.organisationIds)} (p99 ${format(measured.p99)} ms)`);
    lines.push(`-- the plan chosen: ${search.plan.reasons.join("; ")}`);
    lines.push("-- the page", await inPageTransaction(db, (tx) => explainAnalyze(tx, userPageQuery(tx, search.search, search.plan, combination.position, 51))), "");
    if (search.plan.count.kind === "count") {
      lines.push(
        `-- the count, up to ${exactCountLimit.toLocaleString("en-GB")} (under its 100 ms statement timeout in the service)`,
        await inCountTransaction(db, 60_000, (tx) => explainAnalyze(tx, userCountQuery(tx, search.search, search.plan, exactCountLimit))),
        "",
      );
    }
  }
  lines.push(verdict(over.length, combinations.length, goalP99Ms, `${size.toLocaleString("en-GB")} people`));
  return lines;
}
