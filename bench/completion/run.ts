// Completion API benchmark on real PostgreSQL: a course of ~400 blocks, 10,000
// enrolled learners and ~1.5 million completions, ingested through
// POST /api/completion/v1/completion-batch; then single-user detail, the staff
// all-users page and stats, each against the bare SQL that fetches the same rows
// (enrollment, stale record and structure digest included; prepared, as the
// service prepares its own), the two timed in alternating blocks so that both
// meet the same load on a shared machine. Reads go over a real keep-alive HTTP
// connection, as callers make them: app.inject's stand-in request and response
// objects live long enough for the garbage collector to promote them, which
// costs a plain one-query route 2-3 ms pauses at p99 that a socket does not
// have. The fixed cost of HTTP is shown apart at the end, each both ways: the
// detail read, a bare Fastify route that runs the bare SQL and then sends a
// body of the same size, and one that only sends that body.
//
//   npm run bench -- completion
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres  (default)
//   BENCH_LEARNERS=10000 BENCH_BATCH=50 BENCH_CONCURRENCY=8 BENCH_READS=2000 BENCH_ROUNDS=3
import { Agent, request as httpRequest } from "node:http";
import { performance } from "node:perf_hooks";
import { createDrizzle, createPool, runMigrations } from "@tessera/db";
import Fastify from "fastify";
import pg from "pg";
import {
  buildApp,
  COMPLETION_MIGRATIONS,
  completionSchema,
  createContext,
  DEFAULT_AGGREGATOR_TYPES,
  loadBulkData,
  type BulkBlock,
  type CallerResolver,
} from "@tessera/completion";

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
const pool = createPool({ url: url.toString(), max: CONCURRENCY + 2 });

try {
  await runMigrations(pool, [COMPLETION_MIGRATIONS]);
  const db = createDrizzle(pool, completionSchema);
  const staffCaller = { uid: "bench", email: "bench@example.com", name: "Bench", permissions: ["signin", "staff"] };
  // The benchmark measures this service, not Sign-on: every token is the staff caller.
  const callers: CallerResolver = { resolveCaller: async () => staffCaller };
  const ctx = createContext({ aggregatorTypes: DEFAULT_AGGREGATOR_TYPES, rebuildStaleFromScratch: false, preparedStatements: true }, db, callers);
  const app = await buildApp(ctx);
  await app.ready();

  const { port } = new URL(await app.listen({ host: "127.0.0.1", port: 0 }));
  const { root, leaves, blockCount } = courseTree();
  console.log(`course: ${blockCount} blocks (${leaves.length} completable); learners: ${LEARNERS}`);
  const users = Array.from({ length: LEARNERS }, (_, i) => ({ id: i + 1, username: `learner${i + 1}`, email: `learner${i + 1}@example.com` }));
  let start = performance.now();
  await loadBulkData(
    db,
    ctx.structures,
    ctx.settings.aggregatorTypes,
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
  const structure = await ctx.structures.get(db, COURSE);

  const bareDetail = async (i: number): Promise<void> => {
    // What the read needs: the learner, whether actively enrolled, whether stale, the stored structure digest, and
    // (these types being every stored type) all the learner's aggregates in the course.
    await pool.query({
      name: "bench_detail",
      text: `with l as materialized (
               select x.id, x.username,
                 exists (select 1 from completion.enrollments e where e.course_key = $1 and e.learner_id = x.id and e.is_active) as enrolled,
                 exists (select 1 from completion.stale_completions s where s.username = x.username and s.course_key = $1 and not s.resolved) as stale,
                 (select c.structure_hash from completion.courses c where c.key = $1) as course_hash
               from completion.learners x where x.username = $2)
             select l.id, l.username, l.enrolled, l.stale, l.course_hash, a.block_key, a.earned, a.possible
             from l left join completion.aggregates a on a.course_key = $1 and a.learner_id = l.id`,
      values: [COURSE, `learner${learnerOf(i)}`],
    });
  };

  rows.push([
    "single-user detail, requested_fields=chapter,sequential,vertical",
    ...(await compare(
      READS,
      (i) => overSocket(port, `/api/completion/v1/course/${COURSE}/?username=learner${learnerOf(i)}&requested_fields=chapter,sequential,vertical`),
      bareDetail,
    )),
  ]);

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

  // The fixed cost of HTTP, apart from the read: the detail read through app.inject and over a real keep-alive
  // socket, next to a route that only sends an already-serialised body of the same size.
  const detailUrl = (i: number): string =>
    `/api/completion/v1/course/${COURSE}/?username=learner${learnerOf(i)}&requested_fields=chapter,sequential,vertical`;
  const sample = await app.inject({ method: "GET", url: detailUrl(0), headers: { authorization: "Bearer bench" } });
  const floor = Fastify();
  floor.get("/floor", (_request, reply) => reply.header("content-type", "application/json; charset=utf-8").send(sample.body));
  let floorRead = 0;
  floor.get("/floor-sql", async (_request, reply) => {
    await bareDetail(floorRead++);
    return reply.header("content-type", "application/json; charset=utf-8").send(sample.body);
  });
  const floorPort = new URL(await floor.listen({ host: "127.0.0.1", port: 0 })).port;
  const http = {
    injectRead: await time(READS, (i) => app.inject({ method: "GET", url: detailUrl(i), headers: { authorization: "Bearer bench" } }).then(() => undefined)),
    socketRead: await time(READS, (i) => overSocket(port, detailUrl(i))),
    injectFloor: await time(READS, () => floor.inject({ method: "GET", url: "/floor" }).then(() => undefined)),
    socketFloor: await time(READS, () => overSocket(floorPort, "/floor")),
    injectSqlFloor: await time(READS, () => floor.inject({ method: "GET", url: "/floor-sql" }).then(() => undefined)),
    socketSqlFloor: await time(READS, () => overSocket(floorPort, "/floor-sql")),
  };
  agent.destroy();
  await floor.close();
  console.log(`\nHTTP cost, single-user detail (${sample.body.length} bytes)                 app.inject p50/p99 ms   socket p50/p99 ms`);
  const line = (name: string, a: { p50: number; p99: number }, b: { p50: number; p99: number }): string =>
    `${name.padEnd(60)}${a.p50.toFixed(2).padStart(7)} /${a.p99.toFixed(2).padStart(7)}   ${b.p50.toFixed(2).padStart(8)} /${b.p99.toFixed(2).padStart(7)}`;
  console.log(line("the detail read", http.injectRead, http.socketRead));
  console.log(line("a route running the bare SQL, then sending the same body", http.injectSqlFloor, http.socketSqlFloor));
  console.log(line("a route sending the same body, nothing else (HTTP floor)", http.injectFloor, http.socketFloor));
  console.log(
    `the read less the floor: ${(http.injectRead.p50 - http.injectFloor.p50).toFixed(2)} ms (inject), ` +
      `${(http.socketRead.p50 - http.socketFloor.p50).toFixed(2)} ms (socket) at p50; bare SQL ${rows[0]![2].p50.toFixed(2)} ms`,
  );
  await app.close();
} finally {
  await pool.end();
  await admin.query(`drop database if exists ${DATABASE}`);
  await admin.end();
}
