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
import { createDrizzle, createPool, runMigrations, withStatementTimeout } from "@tessera/db";
import { dropDatabase, recreateDatabase } from "@tessera/db/testing";
import { loadConfig, signonMigrations } from "@tessera/signon";
import { sql, type SQLWrapper } from "drizzle-orm";
import { readFileSync } from "node:fs";
import { resolvedSearch, type UserFilters } from "../../packages/signon/src/accounts/user-search.js";
import * as schema from "../../packages/signon/src/db/schema.js";
import { statementRunner } from "../../packages/signon/src/db/statements.js";
import { encodeRowKey, type PagePosition, type RowKey } from "../../packages/signon/src/repositories/keyset.js";
import { estimateUsers, userCountQuery, userPageQuery } from "../../packages/signon/src/repositories/user-search.js";
import type { Actor } from "../../packages/signon/src/web/policy.js";
import { generatePeople } from "../../packages/signon/test/support/generated-people.js";
import { forkSide, stopSide } from "../support/forked-side.js";
import type { ScaleServer } from "./signon-serve.js";

const serverUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const databaseName = process.env.BENCH_SCALE_SIGNON_DATABASE || "tessera_bench_scale_signon";
const sizes = (process.env.BENCH_SCALE_PEOPLE || "1000,100000,1000000").split(",").map(Number);
const samples = Number(process.env.BENCH_SCALE_SAMPLES || 40);
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

async function measure(browser: Browser, path: string): Promise<Measured> {
  const times: number[] = [];
  for (let i = 0; i < samples + 3; i++) {
    const started = performance.now();
    const response = await browser.fetch(path);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    if (i >= 3) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
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
    for (const byte of value) if (byte === 10) lines++;
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

  try {
    for (const size of sizes) {
      const url = await recreateDatabase(serverUrl, databaseName);
      const pool = createPool({ url, max: 4, statementTimeoutMs: null });
      const db = createDrizzle(pool, schema);
      const generationStarted = performance.now();
      await runMigrations(pool, [signonMigrations]);
      const generated = await withStatementTimeout(null, () => generatePeople(db, size, 100_000));
      await db.execute(sql`vacuum analyze signon.users`);
      await db.execute(sql`vacuum analyze signon.user_permissions`);
      console.log(`${size.toLocaleString("en-GB")} people generated in ${((performance.now() - generationStarted) / 1000).toFixed(1)} s`);

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
      ];

      const side = await forkSide<ScaleServer>(new URL("./signon-serve.ts", import.meta.url), [url]);
      try {
        const browser = new Browser(side.prepared.url);
        await browser.signIn(side.prepared.email, side.prepared.password);
        const timed: { read: Read; p99: number }[] = [];
        for (const read of reads) {
          const measured = await measure(browser, pathOf(read));
          record(read.label, size, `${format(measured.p50)} / ${format(measured.p99)} ms`);
          timed.push({ read, p99: measured.p99 });
        }
        const csv = await measureCsv(browser, side.child.pid as number);
        record(
          `\`users.csv\`, everyone (young generation: ${semiSpaceMiB ? `${semiSpaceMiB} MB semi-spaces` : "Node's own"}; heap ceiling: ${oldSpaceMiB > 0 ? `${oldSpaceMiB} MB` : "Node's own"})`,
          size,
          `${csv.seconds.toFixed(2)} s, first byte ${format(csv.firstByteMs)} ms, RSS +${csv.rssGrowthMiB.toFixed(0)} MiB (${csv.rows.toLocaleString("en-GB")} rows)`,
        );

        for (const slowest of timed.sort((a, b) => b.p99 - a.p99).slice(0, explainedReads)) {
          const config = loadConfig({ DATABASE_URL: url, SIGNON_TWO_STEP_REQUIRED_ROLES: "none" });
          const ctx = { db, statements: statementRunner(pool, false), config, now: () => new Date() };
          const actor: Actor = { uid: "00000000-0000-4000-8000-000000000000", role: "superadmin", organisationId: null };
          const filters: UserFilters = { text: "", role: "", organisation: "", status: "", permission: "", twoStep: "", ...slowest.read.filters };
          const search = await resolvedSearch(ctx, actor, filters);
          const show = async (title: string, query: SQLWrapper) => {
            const rows = (await db.execute<{ "QUERY PLAN": string }>(sql`explain (analyze, buffers) ${query}`)).rows;
            explained.push(`-- ${size.toLocaleString("en-GB")} people, slow read: ${slowest.read.label} (p99 ${format(slowest.p99)} ms): ${title}\n${rows.map((row) => row["QUERY PLAN"]).join("\n")}`);
          };
          await show("the page", userPageQuery(db, search, slowest.read.position, 51));
          const estimate = await estimateUsers(db, search);
          if (estimate <= 1000) await show("the count", userCountQuery(db, search, 1000));
          else explained.push(`-- the count: PostgreSQL's estimate, ${estimate.toLocaleString("en-GB")} (EXPLAIN only)`);
        }
      } finally {
        await stopSide(side.child);
        await pool.end();
      }
    }
  } finally {
    await dropDatabase(serverUrl, databaseName);
  }

  const header = `| Read | ${sizes.map((size) => `${size.toLocaleString("en-GB")} people`).join(" | ")} |`;
  console.log(`\nSign-on users list (p50 / p99 over HTTP, ${samples} requests each)\n`);
  console.log(header);
  console.log(`|---|${sizes.map(() => "---").join("|")}|`);
  for (const [label, row] of table) console.log(`| ${label} | ${sizes.map((size) => row.get(size) ?? "").join(" | ")} |`);
  console.log(`\nEXPLAIN ANALYZE of the ${explainedReads} slowest reads at each size\n`);
  for (const plan of explained) console.log(`${plan}\n`);
}
