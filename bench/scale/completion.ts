// Completion at scale: one course of 1k, 100k and 1M (BENCH_SCALE_MILLION=0 leaves it out) active learners generated through
// SQL (generate_series), then, through the real service over keep-alive HTTP (bench/completion/serve.ts, a fixed staff
// caller), stats without a filter and with `cohorts` and `exclude_roles`, and the all-users detail page, first and
// last (page_size=100): p50 / p99, each beside its SQL alone (prepared, from this process). Then EXPLAIN ANALYZE of
// the slowest read's SQL at the largest size.
//
//   npm run bench -- scale
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres  (default; the server, not the database)
//   BENCH_SCALE_COMPLETION_DATABASE=tessera_bench_scale_completion  (created, then dropped)
//   BENCH_SCALE_MILLION=0  leaves out 1M learners; BENCH_SCALE_SIZES=1000,100000 picks the sizes; BENCH_SCALE_READS=500
//   BENCH_SCALE_FLOOR_READS=3000  requests per side of each route-against-floor comparison
//   BENCH_SCALE_COMBINATIONS=200  random combinations of the list's, detail's and stats' parameters drawn at the largest
//   size (BENCH_SCALE_SEED seeds them), each 3 requests to warm up and 10 timed; one over 200 ms p99 ends the run with
//   exit code 1. Then each read route against its floor (a bare Fastify route in the service's process running the
//   same statement and sending its rows), taking turns request by request: p99 and their ratio, over HTTP and inside
//   the service, with the service's garbage collection. BENCH_SCALE_ALLOCATIONS=1 adds what the service allocates per
//   request of each route and its floor, by the functions that allocate most.
import { fork, type ChildProcess } from "node:child_process";
import { Agent, request as httpRequest } from "node:http";
import { performance } from "node:perf_hooks";
import { createDrizzle, createPool, runMigrations } from "@tessera/db";
import pg from "pg";
import { COMPLETION_MIGRATIONS, completionSchema, DEFAULT_AGGREGATOR_TYPES, loadBulkData, type BulkBlock } from "@tessera/completion";
import { CourseStructures } from "../../packages/completion/src/domain/course-structures.js";
import { courseStatsSql } from "../../packages/completion/src/repositories/course-sums.js";
import { pageActiveLearnersSql } from "../../packages/completion/src/repositories/learner-reads.js";
import type { AllocationSummary } from "../completion/allocation-profile.js";
import type { CollectionReport, HandledReport, RecordedStatement, ServiceRequest, Serving } from "../completion/serve.js";
import { seededRandom, verdict } from "./combinations.js";

const SERVER = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";
const DATABASE = process.env["BENCH_SCALE_COMPLETION_DATABASE"] ?? "tessera_bench_scale_completion";
const SIZES = (process.env["BENCH_SCALE_SIZES"] ?? (process.env["BENCH_SCALE_MILLION"] === "0" ? "1000,100000" : "1000,100000,1000000"))
  .split(",")
  .map(Number)
  .sort((a, b) => a - b);
const READS = Number(process.env["BENCH_SCALE_READS"] ?? 500);
/**
 * Requests per side of each route-against-floor comparison: a p99 of 500 is the fifth-slowest request, which one
 * stray pause of the machine moves; of 3,000 it is the thirtieth.
 */
const FLOOR_READS = Number(process.env["BENCH_SCALE_FLOOR_READS"] ?? 3000);
/** A read route's p99 over HTTP may be this many times its floor's. */
const FLOOR_RATIO_GOAL = 1.5;
/** BENCH_SCALE_ALLOCATIONS=1: after each comparison, what the service allocates per request of the route and of its floor. */
const ALLOCATIONS = process.env["BENCH_SCALE_ALLOCATIONS"] === "1";
const COMBINATIONS = Number(process.env["BENCH_SCALE_COMBINATIONS"] ?? 200);
const SEED = Number(process.env["BENCH_SCALE_SEED"] || 1);
/** Every read's goal at the largest size, for every combination of parameters: p99 at most this, over HTTP. */
const GOAL_P99_MS = 200;
export const COURSE = "course-v1:ScaleX+Big101+2026";
const PAGE_SIZE = 100;

/** 4 chapters × 5 sequentials × 2 verticals × 2 problems: 80 completable blocks. */
export function courseTree(): BulkBlock {
  return {
    type: "course",
    id: "course",
    children: Array.from({ length: 4 }, (_, c) => ({
      type: "chapter",
      id: `ch${c}`,
      children: Array.from({ length: 5 }, (_, s) => ({
        type: "sequential",
        id: `s${c}_${s}`,
        children: Array.from({ length: 2 }, (_, v) => ({
          type: "vertical",
          id: `v${c}_${s}_${v}`,
          children: Array.from({ length: 2 }, (_, p) => ({ type: "problem", id: `p${c}_${s}_${v}_${p}` })),
        })),
      })),
    })),
  };
}

function databaseUrl(name: string): string {
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Learners (from, to]: one in 47 inactive, three in four with a course aggregate (earned a multiple of 1/8 or of
 * 1/10 of 80), one in 100 holding `staff`, one in 250 `beta_testers`, half of them in one of three cohorts.
 * Generated with triggers off (`session_replication_role = replica`), each enrollment given its statistics group as
 * the triggers would, then the course's sums rebuilt from the enrollments by `completion.rebuild_course_sums`, the
 * function migration 0004 backfills with (the triggers cost about as much again as the plain inserts).
 */
export async function generate(client: pg.Client, from: number, to: number, courseRoot: string): Promise<void> {
  for (let low = from; low < to; low += 100_000) {
    const high = Math.min(to, low + 100_000);
    await client.query("begin");
    await client.query("set local session_replication_role = replica");
    await client.query(
      `insert into completion.learners (id, username, email) select g, 'learner' || g, 'learner' || g || '@example.com' from generate_series($1::int + 1, $2::int) g`,
      [low, high],
    );
    await client.query(
      `insert into completion.cohort_memberships (cohort_id, learner_id) select 1 + g % 3, g from generate_series($1::int + 1, $2::int) g where g % 2 = 0`,
      [low, high],
    );
    await client.query(
      `insert into completion.course_roles (course_key, learner_id, role)
       select $3, g, 'staff' from generate_series($1::int + 1, $2::int) g where g % 100 = 0
       union all select $3, g, 'beta_testers' from generate_series($1::int + 1, $2::int) g where g % 250 = 0`,
      [low, high, COURSE],
    );
    await client.query(
      `insert into completion.enrollments (learner_id, course_key, is_active, course_earned, course_possible, course_percent, stat_cohorts, stat_roles)
       select g, $3, g % 47 <> 0, x.earned, x.possible, x.earned / x.possible,
         case when g % 2 = 0 then array[1 + g % 3] else '{}' end,
         case when g % 500 = 0 then array['beta_testers', 'staff'] when g % 100 = 0 then array['staff'] when g % 250 = 0 then array['beta_testers'] else '{}' end
       from generate_series($1::int + 1, $2::int) g
       cross join lateral (select case when g % 4 = 0 then null when g % 2 = 0 then (g % 641) / 8.0 else (g % 801) / 10.0 end::float8 as earned,
                                  case when g % 4 = 0 then null else 80 end::float8 as possible) x`,
      [low, high, COURSE],
    );
    await client.query(
      `insert into completion.aggregates (course_key, learner_id, block_key, aggregation_name, earned, possible, percent)
       select e.course_key, e.learner_id, $4, 'course', e.course_earned, e.course_possible, e.course_percent
       from completion.enrollments e where e.course_key = $3 and e.learner_id > $1 and e.learner_id <= $2 and e.course_earned is not null`,
      [low, high, COURSE, courseRoot],
    );
    await client.query("commit");
  }
  await client.query("select completion.rebuild_course_sums($1)", [COURSE]);
  await client.query("vacuum analyze completion.enrollments, completion.aggregates, completion.learners, completion.course_stat_sums, completion.course_learner_buckets, completion.course_roles, completion.cohort_memberships");
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, agent, headers: { authorization: "Bearer bench" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

async function timeRead(port: number, path: string): Promise<{ p50: number; p99: number; body: string }> {
  let body = "";
  for (let i = 0; i < Math.min(100, READS); i += 1) {
    const response = await get(port, path);
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${response.body.slice(0, 300)}`);
    body = response.body;
  }
  const samples: number[] = [];
  for (let i = 0; i < READS; i += 1) {
    const start = performance.now();
    const response = await get(port, path);
    samples.push(performance.now() - start);
    if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
  }
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), body };
}

/** The read's SQL alone, prepared as the service prepares it, from this process: what the database takes. */
async function timeSql(client: pg.Client, name: string, text: string, values: unknown[]): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < Math.min(100, READS); i += 1) await client.query({ name, text, values, rowMode: "array" });
  const samples: number[] = [];
  for (let i = 0; i < READS; i += 1) {
    const start = performance.now();
    await client.query({ name, text, values, rowMode: "array" });
    samples.push(performance.now() - start);
  }
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

function startService(url: string, learners: number): Promise<{ child: ChildProcess; port: number; floorPort: number }> {
  const child = fork(new URL("../completion/serve.ts", import.meta.url).pathname, [url, COURSE, String(learners)], {
    execArgv: ["--import", "tsx"],
    // Its request log goes to standard output, as the server's does: to /dev/null here.
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", (message: Serving) => resolve({ child, port: message.port, floorPort: message.floorPort }));
    child.once("exit", (code) => reject(new Error(`the service exited (${code})`)));
  });
}

async function stopService(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.send("stop");
  await exited;
}

/** Sends `request` to the service process and resolves with its answer. */
function ask<T>(child: ChildProcess, request: "statements" | "collections" | "handled"): Promise<T> {
  return askService(child, request);
}

function askService<T>(child: ChildProcess, request: ServiceRequest): Promise<T> {
  return new Promise((resolve) => {
    child.once("message", (message) => resolve(message as T));
    child.send(request);
  });
}

/** Block keys of the generated course, for `root_block` and the detail's requested fields. */
const BLOCKS = {
  chapter: "block-v1:ScaleX+Big101+2026+type@chapter+block@ch1",
  sequential: "block-v1:ScaleX+Big101+2026+type@sequential+block@s2_3",
};

/** `count` seeded draws of the read routes' parameters at `learners` learners (the detail's pages counted in `count`). */
function drawReads(count: number, learners: number, activeCount: number): string[] {
  const random = seededRandom(SEED);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const learner = () => 1 + Math.floor(random() * learners);
  const paths: string[] = [];
  for (let n = 0; n < count; n += 1) {
    const params = new URLSearchParams();
    const kind = random();
    if (kind < 0.3) {
      if (random() < 0.8) params.set("username", `learner${learner()}`);
      if (random() < 0.4) params.set("requested_fields", pick(["chapter", "chapter,sequential", "mean", "sequential,vertical"]));
      if (random() < 0.3) params.set("page_size", pick(["1", "10", "100"]));
      if (random() < 0.2) params.set("mobile_only", pick(["true", "false"]));
      paths.push(`/api/completion/v1/course/?${params.toString()}`);
    } else if (kind < 0.7) {
      const who = random();
      if (who < 0.35) params.set("username", `learner${learner()}`);
      else if (who < 0.55) params.set("user_ids", Array.from({ length: 1 + Math.floor(random() * 20) }, learner).join(","));
      const pageSize = pick([10, 50, 100, 500]);
      if (who >= 0.35) {
        params.set("page_size", String(pageSize));
        const last = Math.max(1, Math.ceil(activeCount / pageSize));
        if (who >= 0.55) params.set("page", String(pick([1, 2, Math.ceil(last / 2), last])));
      }
      if (random() < 0.3) params.set("root_block", pick([BLOCKS.chapter, BLOCKS.sequential]));
      if (random() < 0.4) params.set("requested_fields", pick(["chapter", "chapter,sequential", "mean", "sequential,vertical,mean"]));
      paths.push(`/api/completion/v1/course/${COURSE}/?${params.toString()}`);
    } else {
      if (random() < 0.6) params.set("cohorts", String(pick([1, 2, 3])));
      if (random() < 0.6) params.set("exclude_roles", pick(["staff", "beta_testers", "staff,beta_testers"]));
      const query = params.toString();
      paths.push(`/api/completion/v1/stats/${COURSE}/${query === "" ? "" : `?${query}`}`);
    }
  }
  return paths;
}

/** 3 requests to warm up, then `timed` timed ones: p50 and p99 in ms. */
async function timePath(port: number, path: string, timed: number): Promise<{ p50: number; p99: number }> {
  const samples: number[] = [];
  for (let i = 0; i < timed + 3; i += 1) {
    const start = performance.now();
    const response = await get(port, path);
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${response.body.slice(0, 300)}`);
    if (i >= 3) samples.push(performance.now() - start);
  }
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/** The random combinations at the largest size: the slowest ten with EXPLAIN of the statements they sent; exit code 1 over the goal. */
async function measureCombinations(child: ChildProcess, port: number, client: pg.Client, learners: number, activeCount: number): Promise<string[]> {
  const paths = drawReads(COMBINATIONS, learners, activeCount);
  const timed: { path: string; p50: number; p99: number }[] = [];
  for (const path of paths) timed.push({ path, ...(await timePath(port, path, 10)) });
  timed.sort((a, b) => b.p99 - a.p99);
  const over = timed.filter((read) => read.p99 > GOAL_P99_MS);
  const p99s = timed.map((read) => read.p99).sort((a, b) => a - b);
  const lines = [
    `\nCompletion reads, ${paths.length} random combinations of the list's, detail's and stats' parameters at ${learners.toLocaleString("en")} learners (seed ${SEED}; 3 warm-ups and 10 timed requests each)`,
    `p99 over the combinations: median ${percentile(p99s, 50).toFixed(2)} ms, slowest ${(p99s.at(-1) ?? 0).toFixed(2)} ms; over ${GOAL_P99_MS} ms: ${over.length}\n`,
    "The 10 slowest:\n",
    "| Read | p50 / p99 |",
    "|---|---|",
    ...timed.slice(0, 10).map((read) => `| \`${read.path.replace(`/api/completion/v1`, "")}\` | ${read.p50.toFixed(2)} / ${read.p99.toFixed(2)} ms |`),
    "",
  ];
  for (const read of timed.slice(0, 10)) {
    await ask<RecordedStatement[]>(child, "statements");
    await get(port, read.path);
    const statements = await ask<RecordedStatement[]>(child, "statements");
    lines.push(`-- ${read.path} (p99 ${read.p99.toFixed(2)} ms): ${statements.length} statements; the slowest, EXPLAIN (ANALYZE, BUFFERS):`);
    let slowest: { ms: number; plan: string } | null = null;
    // Reads only: EXPLAIN ANALYZE runs what it explains, and a read may also record something (a learner linked on first sight).
    for (const statement of statements.filter((one) => /^\s*(select|with)\b/i.test(one.text) && !/\b(insert|update|delete)\b/i.test(one.text))) {
      try {
        const result = await client.query<{ "QUERY PLAN": string }>(`explain (analyze, buffers) ${statement.text}`, statement.values);
        const plan = result.rows.map((row) => row["QUERY PLAN"]).join("\n");
        const ms = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? 0);
        if (slowest === null || ms > slowest.ms) slowest = { ms, plan };
      } catch {
        // A statement that writes or that EXPLAIN cannot take (none among the reads): not shown.
      }
    }
    lines.push(slowest?.plan ?? "(no statement to explain)", "");
  }
  lines.push(verdict(over.length, paths.length, GOAL_P99_MS, `${learners.toLocaleString("en")} learners`));
  return lines;
}

/**
 * Each read route against its floor, a bare Fastify route in the service's process running the same statement and
 * sending its rows. The two take turns request by request, so that a pause of the machine (another process, the
 * client's own garbage collection) meets both alike; blocks of requests let one side meet a pause the other missed,
 * and the p99 of either moved with it. p50 and p99 over HTTP, and inside the service (Fastify's time from the first
 * hook to the end of the response), the ratio of the p99s over HTTP, and the service's garbage collection over
 * both sides' requests.
 */
async function compareWithFloors(child: ChildProcess, port: number, floorPort: number, lastOffset: number): Promise<string[]> {
  const pairs: [string, string, string][] = [
    ["stats, no filter", `/api/completion/v1/stats/${COURSE}/`, "/floor-stats"],
    ["stats, cohorts=1&exclude_roles=staff,beta_testers", `/api/completion/v1/stats/${COURSE}/?cohorts=1&exclude_roles=staff,beta_testers`, "/floor-stats?cohorts=1&exclude_roles=staff,beta_testers"],
    [`all-users detail, page 1 (page_size=${PAGE_SIZE})`, `/api/completion/v1/course/${COURSE}/?page_size=${PAGE_SIZE}`, `/floor-detail?offset=0&limit=${PAGE_SIZE}`],
    [`all-users detail, last page`, `/api/completion/v1/course/${COURSE}/?page_size=${PAGE_SIZE}&page=${lastOffset / PAGE_SIZE + 1}`, `/floor-detail?offset=${lastOffset}&limit=${PAGE_SIZE}`],
  ];
  const lines = [
    `\nEach read route against its floor (the same statement in a bare Fastify route of the service's process), ${FLOOR_READS.toLocaleString("en")} requests each, taking turns:\n`,
    "| Read | route p50 / p99 | floor p50 / p99 | p99 ratio | inside the service: route p99 / floor p99 | the service's GC: minor (max) / major |",
    "|---|---|---|---|---|---|",
  ];
  const over: string[] = [];
  const profiles: string[] = [];
  for (const [name, route, floor] of pairs) {
    const routeSamples: number[] = [];
    const floorSamples: number[] = [];
    // Warm: until both sides' code is compiled by the optimising tier, which takes some hundreds of requests.
    for (let i = 0; i < 500; i += 1) {
      await get(port, route);
      await get(floorPort, floor);
    }
    await ask<CollectionReport>(child, "collections");
    await ask<HandledReport>(child, "handled");
    for (let i = 0; i < FLOOR_READS; i += 1) {
      // Which side goes first alternates too: neither always follows the other.
      const sides: [number, string, number[]][] = [
        [port, route, routeSamples],
        [floorPort, floor, floorSamples],
      ];
      if (i % 2 === 1) sides.reverse();
      for (const [sidePort, path, samples] of sides) {
        const start = performance.now();
        await get(sidePort, path);
        samples.push(performance.now() - start);
      }
    }
    const gc = await ask<CollectionReport>(child, "collections");
    const handled = await ask<HandledReport>(child, "handled");
    const [r50, r99, f50, f99] = [percentile(routeSamples, 50), percentile(routeSamples, 99), percentile(floorSamples, 50), percentile(floorSamples, 99)];
    lines.push(
      `| ${name} | ${r50.toFixed(2)} / ${r99.toFixed(2)} ms | ${f50.toFixed(2)} / ${f99.toFixed(2)} ms | ${(r99 / f99).toFixed(2)} | ${percentile(handled.route, 99).toFixed(2)} / ${percentile(handled.floor, 99).toFixed(2)} ms | ${gc.minor.count} (${gc.minor.maxMs.toFixed(2)} ms) / ${gc.major.count} |`,
    );
    if (r99 / f99 > FLOOR_RATIO_GOAL) over.push(name);
    if (ALLOCATIONS) profiles.push(...(await allocationProfiles(child, name, [port, route], [floorPort, floor])));
  }
  lines.push(
    "",
    over.length === 0
      ? `Every read route's p99 within ${FLOOR_RATIO_GOAL}× of its floor's.`
      : `Over ${FLOOR_RATIO_GOAL}× of its floor's p99: ${over.join("; ")}.`,
    ...profiles,
  );
  return lines;
}

/** What the service allocates per request of a route and of its floor, in all and by the largest sites. */
async function allocationProfiles(child: ChildProcess, name: string, ...sides: [number, string][]): Promise<string[]> {
  const requests = 1000;
  const lines = [`\nAllocated per request, ${name} (sampled over ${requests.toLocaleString("en")} requests):`];
  for (const [[sidePort, path], side] of sides.map((entry, at) => [entry, at === 0 ? "route" : "floor"] as const)) {
    await askService(child, { allocations: "start" });
    for (let i = 0; i < requests; i += 1) await get(sidePort, path);
    const summary = await askService<AllocationSummary>(child, { allocations: "stop", requests });
    lines.push(`- ${side}: ${(summary.bytesPerRequest / 1024).toFixed(1)} KiB, of which ${summary.sites.map((site) => `${site.site} ${(site.bytesPerRequest / 1024).toFixed(1)}`).join("; ")}`);
  }
  return lines;
}

/** Runs the Completion scale benchmark and prints its table. */
export async function run(): Promise<void> {
  const admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`drop database if exists ${DATABASE}`);
  await admin.query(`create database ${DATABASE}`);
  const url = databaseUrl(DATABASE);
  const pool = createPool({ url, max: 2 });
  const client = new pg.Client({ connectionString: url });
  try {
    await runMigrations(pool, [COMPLETION_MIGRATIONS]);
    const db = createDrizzle(pool, completionSchema);
    await loadBulkData(db, new CourseStructures(), new Set(DEFAULT_AGGREGATOR_TYPES), { courses: [{ course_key: COURSE, structure: courseTree() }] }, new Date());
    await client.connect();
    await client.query(`insert into completion.cohorts (id, course_key, name) values (1, $1, 'A'), (2, $1, 'B'), (3, $1, 'C')`, [COURSE]);
    const courseRoot = "block-v1:ScaleX+Big101+2026+type@course+block@course";
    const table: string[][] = [];
    const plans: { size: number; name: string; ms: number; explain: () => Promise<string> }[] = [];
    let generated = 0;
    const extra: string[] = [];
    for (const size of SIZES) {
      const started = performance.now();
      await generate(client, generated, size, courseRoot);
      generated = size;
      const generatedIn = (performance.now() - started) / 1000;
      const sums = await client.query<{ rows: string; buckets: string }>(
        `select (select count(*) from completion.course_stat_sums) as rows, (select count(*) from completion.course_learner_buckets) as buckets`,
      );
      const { child, port, floorPort } = await startService(url, size);
      try {
        const stats = `/api/completion/v1/stats/${COURSE}/`;
        const filtered = `${stats}?cohorts=1&exclude_roles=staff,beta_testers`;
        const detail = `/api/completion/v1/course/${COURSE}/?page_size=${PAGE_SIZE}`;
        const count = (JSON.parse((await get(port, detail)).body) as { count: number }).count;
        const lastPage = Math.max(1, Math.ceil(count / PAGE_SIZE));
        const reads: [string, string][] = [
          ["stats, no filter", stats],
          ["stats, cohorts=1&exclude_roles=staff,beta_testers", filtered],
          [`all-users detail, page 1 (page_size=${PAGE_SIZE})`, detail],
          [`all-users detail, last page (${lastPage})`, `${detail}&page=${lastPage}`],
        ];
        const row = [`${size.toLocaleString("en")} learners (generated in ${generatedIn.toFixed(1)} s; ${sums.rows[0]!.rows} sums rows, ${sums.rows[0]!.buckets} buckets)`];
        for (const [name, path] of reads) {
          const figures = await timeRead(port, path);
          const offset = (lastPage - 1) * PAGE_SIZE;
          const sql = name.startsWith("stats, no") ? courseStatsSql(false, false) : name.startsWith("stats") ? courseStatsSql(true, true) : pageActiveLearnersSql(false, false);
          const values = name.startsWith("stats, no")
            ? [COURSE]
            : name.startsWith("stats")
              ? [COURSE, 1, ["staff", "beta_testers"]]
              : [COURSE, name.includes("last") ? offset : 0, PAGE_SIZE];
          const bare = await timeSql(client, `scale_${plans.length}`, sql, values);
          row.push(`${name}: ${figures.p50.toFixed(2)} / ${figures.p99.toFixed(2)} ms (its SQL alone: ${bare.p50.toFixed(2)} / ${bare.p99.toFixed(2)} ms)`);
          plans.push({
            size,
            name,
            ms: figures.p99,
            explain: async () => {
              const result = await client.query<{ "QUERY PLAN": string }>(`explain (analyze, buffers) ${sql}`, values);
              return result.rows.map((line) => line["QUERY PLAN"]).join("\n");
            },
          });
        }
        table.push(row);
        console.log(row.join("\n  "));
        if (size === SIZES[SIZES.length - 1]) {
          if (COMBINATIONS > 0) extra.push(...(await measureCombinations(child, port, client, size, count)));
          extra.push(...(await compareWithFloors(child, port, floorPort, (lastPage - 1) * PAGE_SIZE)));
        }
      } finally {
        await stopService(child);
      }
    }
    const largest = SIZES[SIZES.length - 1];
    const slowest = plans.filter((plan) => plan.size === largest).sort((a, b) => b.ms - a.ms)[0];
    if (slowest) {
      console.log(`\nSlowest read at ${largest?.toLocaleString("en")} learners: ${slowest.name} (p99 ${slowest.ms.toFixed(2)} ms). Its SQL, EXPLAIN (ANALYZE, BUFFERS):`);
      console.log(await slowest.explain());
    }
    console.log("\nGoals at the largest size: stats under 10 ms p99, detail pages under 50 ms p99.");
    for (const line of extra) console.log(line);
  } finally {
    agent.destroy();
    await client.end().catch(() => undefined);
    await pool.end();
    await admin.query(`drop database if exists ${DATABASE}`);
    await admin.end();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
