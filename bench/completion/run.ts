// Completion API benchmark on real PostgreSQL: a course of ~400 blocks, 10,000
// enrolled learners and ~1.5 million completions, ingested through
// POST /api/completion/v1/completion-batch; then single-user detail, the staff
// all-users page and stats, each against the bare SQL that fetches the same rows
// (enrollment, stale record and structure digest included; prepared, as the
// service prepares its own), the two timed in alternating blocks so that both
// meet the same load on a shared machine. The service runs in a process of its
// own (serve.ts), as in production, and is called over real keep-alive HTTP
// connections, as callers make them; the bare SQL runs from this process. The
// fixed cost of HTTP is shown apart at the end: the detail read, a bare Fastify
// route in the service's process that runs the bare SQL and then sends a body
// of the same size, and one that only sends that body. The service's garbage
// collection during the detail reads is printed too.
//
//   npm run bench -- completion
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres  (default)
//   BENCH_LEARNERS=10000 BENCH_BATCH=50 BENCH_CONCURRENCY=8 BENCH_READS=2000 BENCH_ROUNDS=3
//   BENCH_PRETENURING=on  keeps V8's allocation-site pretenuring on in the service, which it turns off
import { fork } from "node:child_process";
import { Agent, request as httpRequest } from "node:http";
import { performance } from "node:perf_hooks";
import { createDrizzle, createPool, runMigrations } from "@tessera/db";
import pg from "pg";
import { COMPLETION_MIGRATIONS, completionSchema, DEFAULT_AGGREGATOR_TYPES, loadBulkData, type BulkBlock } from "@tessera/completion";
import { CourseStructures } from "../../packages/completion/src/domain/course-structures.js";
import { bareDetail } from "./detail-query.js";
import type { CollectionReport, ServiceRequest, Serving } from "./serve.js";

const SERVER = process.env["BENCH_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";
const LEARNERS = Number(process.env["BENCH_LEARNERS"] ?? 10_000);
const BATCH = Number(process.env["BENCH_BATCH"] ?? 50);
const CONCURRENCY = Number(process.env["BENCH_CONCURRENCY"] ?? 8);
const READS = Number(process.env["BENCH_READS"] ?? 2000);
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 3);
const COURSE = "course-v1:BenchX+Big101+2026";
const DATABASE = `completion_bench_${process.pid}`;

/** 6 chapters, 20 sequentials, 60 verticals and 313 leaves (every 25th a discussion): 400 blocks. */
function courseTree(): { root: BulkBlock; leaves: string[]; blockCount: number } {
  const leaves: string[] = [];
  const sequentialsPerChapter = [4, 4, 3, 3, 3, 3];
  let leafNumber = 0;
  let verticalNumber = 0;
  let sequentialNumber = 0;
  const chapters: BulkBlock[] = sequentialsPerChapter.map((count, c) => ({
    type: "chapter",
    id: `ch${c}`,
    children: Array.from({ length: count }, () => {
      const s = sequentialNumber++;
      return {
        type: "sequential",
        id: `seq${s}`,
        children: Array.from({ length: 3 }, () => {
          const v = verticalNumber++;
          const leafCount = v < 13 ? 6 : 5;
          return {
            type: "vertical",
            id: `v${v}`,
            children: Array.from({ length: leafCount }, () => {
              const n = leafNumber++;
              const type = n % 25 === 24 ? "discussion" : ["problem", "html", "video"][n % 3]!;
              const key = `block-v1:BenchX+Big101+2026+type@${type}+block@b${n}`;
              if (type !== "discussion") leaves.push(key);
              return { type, id: `b${n}` };
            }),
          };
        }),
      };
    }),
  }));
  return { root: { type: "course", id: "course", children: chapters }, leaves, blockCount: 1 + 6 + 20 + 60 + leafNumber };
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

type Figures = { p50: number; p99: number };

/** The median of a few numbers. */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * Times a read and the bare SQL beside it. The machine may be shared and its load changes from second to second, so
 * the two are not timed one after the other but in alternating blocks of runs (the one that goes first alternating
 * too): both meet the same load. Both are warmed up first (the first thousand or so requests of a fresh process run
 * slower), then timed in ROUNDS rounds of `runs` each; each figure is the median of the rounds' figures, so that one
 * round disturbed by the machine does not decide it.
 */
async function compare(runs: number, ours: (i: number) => Promise<void>, bare: (i: number) => Promise<void>): Promise<[Figures, Figures]> {
  for (let i = 0; i < Math.max(1000, runs); i += 1) {
    await ours(i);
    await bare(i);
  }
  const block = 25;
  const rounds: [Figures, Figures][] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const samples: [number[], number[]] = [[], []];
    for (let at = 0, turn = 0; at < runs; at += block, turn += 1) {
      const order = turn % 2 === 0 ? [0, 1] : [1, 0];
      for (const which of order) {
        const run = which === 0 ? ours : bare;
        for (let i = at; i < Math.min(runs, at + block); i += 1) {
          const start = performance.now();
          await run(i);
          samples[which]!.push(performance.now() - start);
        }
      }
    }
    rounds.push(samples.map((taken) => ({ p50: percentile(taken, 50), p99: percentile(taken, 99) })) as [Figures, Figures]);
  }
  const of = (which: 0 | 1): Figures => ({ p50: median(rounds.map((r) => r[which].p50)), p99: median(rounds.map((r) => r[which].p99)) });
  return [of(0), of(1)];
}

async function time(runs: number, run: (i: number) => Promise<void>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < Math.min(200, runs); i += 1) await run(i);
  const samples: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    await run(i);
    samples.push(performance.now() - start);
  }
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/** One request on a keep-alive agent (JSON body if given), the answer read through; anything but 200 throws. */
function send(agent: Agent, port: string | number, method: string, path: string, body?: unknown): Promise<void> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { authorization: "Bearer bench" };
  if (payload !== undefined) headers["content-type"] = "application/json";
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, method, agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        response.statusCode === 200 ? resolve() : reject(new Error(`${method} ${path}: HTTP ${response.statusCode} ${Buffer.concat(chunks).toString()}`)),
      );
    });
    req.on("error", reject);
    req.end(payload);
  });
}

const admin = new pg.Client({ connectionString: SERVER });
await admin.connect();
await admin.query(`drop database if exists ${DATABASE}`);
await admin.query(`create database ${DATABASE}`);
const url = new URL(SERVER);
url.pathname = `/${DATABASE}`;
// It loads the data set in bulk: no bound on how long one statement may take.
const pool = createPool({ url: url.toString(), max: CONCURRENCY + 2, statementTimeoutMs: null });

/** The service in its process (serve.ts), and what the benchmark asks of it. */
interface Service {
  serving: Serving;
  /** Its garbage collections since the last call. */
  collections(): Promise<CollectionReport>;
  setFloorBody(body: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the service in a process of its own (serve.ts) on the bench database. */
async function startService(): Promise<Service> {
  const child = fork(new URL("./serve.ts", import.meta.url).pathname, [url.toString(), COURSE, String(LEARNERS)], {
    execArgv: ["--import", "tsx"],
    // Its request log goes to standard output, as the server's does: to /dev/null here.
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const exited = new Promise<never>((_resolve, reject) => child.once("exit", (code) => reject(new Error(`the service exited with ${String(code)}`))));
  exited.catch(() => undefined);
  const ask = <T>(request?: ServiceRequest): Promise<T> => {
    const answer = new Promise<T>((resolve) => child.once("message", (message) => resolve(message as T)));
    if (request !== undefined) child.send(request);
    return Promise.race([answer, exited]);
  };
  const serving = await ask<Serving>();
  return {
    serving,
    collections: () => ask<CollectionReport>("collections"),
    setFloorBody: (floorBody) => ask<string>({ floorBody }).then(() => undefined),
    stop: () =>
      new Promise<void>((resolve) => {
        child.removeAllListeners("exit");
        child.once("exit", () => resolve());
        child.send("stop" satisfies ServiceRequest);
      }),
  };
}

let service: Service | undefined;
try {
  await runMigrations(pool, [COMPLETION_MIGRATIONS]);
  const db = createDrizzle(pool, completionSchema);
  const structures = new CourseStructures();
  const { root, leaves, blockCount } = courseTree();
  console.log(`course: ${blockCount} blocks (${leaves.length} completable); learners: ${LEARNERS}`);
  const users = Array.from({ length: LEARNERS }, (_, i) => ({ id: i + 1, username: `learner${i + 1}`, email: `learner${i + 1}@example.com` }));
  let start = performance.now();
  await loadBulkData(
    db,
    structures,
    new Set(DEFAULT_AGGREGATOR_TYPES),
    {
      courses: [{ course_key: COURSE, structure: root }],
      users,
      enrollments: users.map((user) => ({ username: user.username, course_key: COURSE })),
      roles: users.filter((user) => user.id % 100 === 0).map((user) => ({ username: user.username, course_key: COURSE, role: "beta_testers" })),
      cohorts: [{ id: 1, course_key: COURSE, name: "Odd", members: users.filter((user) => user.id % 2 === 1).map((user) => user.username) }],
    },
    new Date(),
  );
  console.log(`setup (users, enrollments, roles, cohort): ${((performance.now() - start) / 1000).toFixed(1)} s`);
  service = await startService();
  const { port, floorPort } = service.serving;

  // Learner i completes the first 100..200 completable blocks (avg 150); every 7th value is fractional.
  const batches: { username: string; blocks: Record<string, number> }[] = [];
  let totalBlocks = 0;
  for (const user of users) {
    const count = 100 + ((user.id * 37) % 101);
    for (let at = 0; at < count; at += BATCH) {
      const blocks: Record<string, number> = {};
      for (let b = at; b < Math.min(count, at + BATCH); b += 1) blocks[leaves[b]!] = b % 7 === 3 ? 0.5 : 1;
      batches.push({ username: user.username, blocks });
      totalBlocks += Object.keys(blocks).length;
    }
  }
  // Over HTTP too: CONCURRENCY clients, each on a keep-alive connection of its own.
  const ingestAgent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        await send(ingestAgent, port, "POST", "/api/completion/v1/completion-batch", { username: batch.username, course_key: COURSE, blocks: batch.blocks });
      }
    }),
  );
  ingestAgent.destroy();
  const seconds = (performance.now() - start) / 1000;
  console.log(
    `ingestion: ${totalBlocks} completions in ${batches.length} batches of up to ${BATCH}, ${CONCURRENCY} concurrent: ` +
      `${seconds.toFixed(1)} s = ${Math.round(totalBlocks / seconds)} blocks/s (target >= 5000)`,
  );
  // The reads then start from a settled state: the batches freed, statistics current, dirty pages written out.
  batches.length = 0;
  await pool.query("vacuum analyze");
  await pool.query("checkpoint").catch(() => console.log("(checkpoint needs a superuser: skipped)"));

  // Reads over one keep-alive connection, as a caller with a connection pool holds.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const overSocket = (toPort: string | number, path: string): Promise<void> => send(agent, toPort, "GET", path);

  const rows: [string, Figures, Figures][] = [];
  const learnerOf = (i: number): number => 1 + ((i * 7919) % LEARNERS);
  const structure = await structures.get(db, COURSE);

  const detailUrl = (i: number): string =>
    `/api/completion/v1/course/${COURSE}/?username=learner${learnerOf(i)}&requested_fields=chapter,sequential,vertical`;
  const detail = (i: number): Promise<void> => bareDetail(pool, COURSE, `learner${learnerOf(i)}`);

  await service.collections();
  rows.push([
    "single-user detail, requested_fields=chapter,sequential,vertical",
    ...(await compare(READS, (i) => overSocket(port, detailUrl(i)), detail)),
  ]);

  const detailCollections = await service.collections();

  // The same comparison for the floor under the detail read: a bare Fastify route in the service's process that runs
  // the bare SQL and sends a body of the detail read's size. What it adds to the bare SQL is HTTP alone.
  const sample = await fetch(`http://127.0.0.1:${port}${detailUrl(0)}`, { headers: { authorization: "Bearer bench" } }).then((response) => response.text());
  await service.setFloorBody(sample);
  rows.push(["floor: a bare route running the detail SQL, same body", ...(await compare(READS, () => overSocket(floorPort, "/floor-sql"), detail))]);

  const pages = Math.ceil(LEARNERS / 100);
  rows.push([
    "staff all-users page, page_size=100",
    ...(await compare(
      READS,
      (i) => overSocket(port, `/api/completion/v1/course/${COURSE}/?page_size=100&page=${1 + (i % pages)}`),
      async (i) => {
        await pool.query({
          name: "bench_page",
          // The page envelope carries the total and the read checks the structure digest, so the bare query has both.
          text: `select p.learner_id, l.username, a.earned, a.possible,
                  (select count(*) from completion.enrollments where course_key = $1 and is_active) as total,
                  (select c.structure_hash from completion.courses c where c.key = $1)
           from (select learner_id from completion.enrollments where course_key = $1 and is_active
                 order by learner_id offset $3 limit 100) p
           join completion.learners l on l.id = p.learner_id
           left join completion.aggregates a on a.course_key = $1 and a.learner_id = p.learner_id and a.block_key = $2
           order by p.learner_id`,
          values: [COURSE, structure!.tree!.root.key, (i % pages) * 100],
        });
      },
    )),
  ]);

  rows.push([
    "stats (cohorts=1, exclude_roles=beta_testers)",
    ...(await compare(
      READS,
      () => overSocket(port, `/api/completion/v1/stats/${COURSE}/?cohorts=1&exclude_roles=beta_testers`),
      async () => {
        await pool.query({
          name: "bench_stats",
          // The cohort must belong to the course, and learners without stored figures are counted apart.
          text: `select count(*), sum(e.course_earned), sum(e.course_possible), count(e.course_possible) from completion.enrollments e
           where e.course_key = $1 and e.is_active
             and exists (select 1 from completion.cohort_memberships m join completion.cohorts c on c.id = m.cohort_id
                         where m.cohort_id = $2 and c.course_key = e.course_key and m.learner_id = e.learner_id)
             and not exists (select 1 from completion.course_roles r where r.course_key = e.course_key and r.learner_id = e.learner_id and r.role = any($3))`,
          values: [COURSE, 1, ["beta_testers"]],
        });
      },
    )),
  ]);

  console.log(`\nread (median of ${ROUNDS} rounds of ${READS})                             ours p50/p99 ms   bare SQL p50/p99 ms   ours ÷ bare (p50/p99)`);
  for (const [name, ours, bare] of rows) {
    console.log(
      `${name.padEnd(60)}${ours.p50.toFixed(2).padStart(7)} /${ours.p99.toFixed(2).padStart(7)}   ${bare.p50.toFixed(2).padStart(8)} /${bare.p99.toFixed(2).padStart(7)}      ${(ours.p50 / bare.p50).toFixed(2)} / ${(ours.p99 / bare.p99).toFixed(2)}`,
    );
  }
  console.log("targets: ingestion >= 5000 blocks/s; every read <= 2x bare SQL and < 50 ms at p99");
  const gcLine = (name: string, figures: CollectionReport["minor"]): string =>
    `${figures.count} ${name} (${figures.totalMs.toFixed(1)} ms in all, longest ${figures.maxMs.toFixed(1)} ms)`;
  console.log(
    `the service's garbage collection during the detail reads: ${gcLine("scavenges", detailCollections.minor)}, ` +
      `${gcLine("full-collection steps", detailCollections.major)}`,
  );

  // The fixed cost of HTTP, apart from the read: the detail read next to a route of the service's process that runs
  // the bare SQL and then sends a body of the same size, and one that only sends that body.
  const http = {
    read: await time(READS, (i) => overSocket(port, detailUrl(i))),
    sqlFloor: await time(READS, () => overSocket(floorPort, "/floor-sql")),
    floor: await time(READS, () => overSocket(floorPort, "/floor")),
  };
  agent.destroy();
  console.log(`\nHTTP cost, single-user detail (${Buffer.byteLength(sample)} bytes)                  p50/p99 ms`);
  const line = (name: string, figures: Figures): string => `${name.padEnd(60)}${figures.p50.toFixed(2).padStart(7)} /${figures.p99.toFixed(2).padStart(7)}`;
  console.log(line("the detail read", http.read));
  console.log(line("a route running the bare SQL, then sending the same body", http.sqlFloor));
  console.log(line("a route sending the same body, nothing else (HTTP floor)", http.floor));
  console.log(`the read less the floor: ${(http.read.p50 - http.floor.p50).toFixed(2)} ms at p50; bare SQL ${rows[0]![2].p50.toFixed(2)} ms`);
} finally {
  await service?.stop();
  await pool.end();
  await admin.query(`drop database if exists ${DATABASE}`);
  await admin.end();
}
