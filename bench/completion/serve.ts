// The Completion service in a process of its own, as it runs in production, so that the benchmark's client, its data
// and its bare-SQL pool never share a heap or an event loop with it. Started by run.ts through fork() with the bench
// database's URL; answers with its ports, then takes the requests of ServiceRequest until "stop".
//
// Beside the service it serves the floor routes the benchmark compares the detail read with: one that runs the bare
// SQL and then sends a body of the detail read's size, and one that only sends that body.
import { PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import { createDrizzle, createPool, parseReadUrls, ReadRouter } from "@tessera/db";
import Fastify from "fastify";
import {
  buildApp,
  completionSchema,
  createContext,
  DEFAULT_AGGREGATOR_TYPES,
  turnOffAllocationSitePretenuring,
  type CallerResolver,
} from "@tessera/completion";
import { courseStatsSql } from "../../packages/completion/src/repositories/course-sums.js";
import { pageActiveLearnersSql } from "../../packages/completion/src/repositories/learner-reads.js";
import { startAllocationSampling, stopAllocationSampling } from "./allocation-profile.js";
import { bareDetail } from "./detail-query.js";

/** What the benchmark gets back once the service listens. */
export interface Serving {
  port: number;
  floorPort: number;
}

/** The service process's garbage collections since the last report. */
export interface CollectionReport {
  minor: { count: number; totalMs: number; maxMs: number };
  major: { count: number; totalMs: number; maxMs: number };
}

/** What the benchmark asks of the service process; each is answered with one message. */
export type ServiceRequest =
  | { floorBody: string }
  | { allocations: "start" }
  | { allocations: "stop"; requests: number }
  | "collections"
  | "handled"
  | "statements"
  | "routed"
  | "stop";

/** How long each request took inside the service process (Fastify's `elapsedTime`), since the last report, in ms. */
export interface HandledReport {
  route: number[];
  floor: number[];
}

/** A statement the service sent to PostgreSQL (recorded between two "statements" requests), for EXPLAIN. */
export interface RecordedStatement {
  text: string;
  values: unknown[];
}

// As the service's own server does; BENCH_PRETENURING=on keeps V8's default, to compare.
if (process.env["BENCH_PRETENURING"] !== "on") turnOffAllocationSitePretenuring();
const url = process.argv[2]!;
const course = process.argv[3]!;
const learners = Number(process.argv[4]);

const pool = createPool({ url, max: 10 });
// Every statement the service sends, kept until the benchmark asks for them: the slowest reads get EXPLAIN ANALYZE.
let recorded: RecordedStatement[] = [];
const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
(pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
  const [first, second] = args;
  if (typeof first === "string") recorded.push({ text: first, values: Array.isArray(second) ? second : [] });
  else if (first !== null && typeof first === "object" && "text" in first) {
    const config = first as { text: string; values?: unknown[] };
    recorded.push({ text: config.text, values: config.values ?? (Array.isArray(second) ? second : []) });
  }
  if (recorded.length > 1000) recorded = recorded.slice(-100);
  return query(...args);
};
const db = createDrizzle(pool, completionSchema);
// BENCH_READ_URLS (bench/replicas): replicas for the reads that tolerate lag, routed as the service routes them.
const replicaPools = parseReadUrls(process.env["BENCH_READ_URLS"]).map((readUrl) => ({ url: readUrl, pool: createPool({ url: readUrl, max: 10 }) }));
const reads = new ReadRouter({ primary: pool, replicas: replicaPools });
await reads.check();
const readDbs = new Map([[pool, db], ...replicaPools.map(({ pool: replicaPool }) => [replicaPool, createDrizzle(replicaPool, completionSchema)] as const)]);
const staffCaller = { uid: "bench", email: "bench@example.com", name: "Bench", permissions: ["signin", "staff"] };
// The benchmark measures this service, not Sign-on: every token is the staff caller.
const callers: CallerResolver = { resolveCaller: async () => staffCaller };
const ctx = createContext({ aggregatorTypes: DEFAULT_AGGREGATOR_TYPES, rebuildStaleFromScratch: false, preparedStatements: true }, db, callers, () => new Date(), () => readDbs.get(reads.pool()) ?? db);
// Logging every request as the service's server does (level info), to /dev/null: its cost is part of a read's.
// Logging every request as the service's server does: level info, to standard output through pino's own default
// destination. Whoever forks this process points its standard output at /dev/null (stdio "ignore").
const app = await buildApp(ctx, { logger: { level: "info" } });
// Each request's time inside the process, from its first hook to the end of its response: where a slow request spent it.
let handled: HandledReport = { route: [], floor: [] };
app.addHook("onResponse", async (_request, reply) => {
  handled.route.push(reply.elapsedTime);
});
const port = Number(new URL(await app.listen({ host: "127.0.0.1", port: 0 })).port);

const floor = Fastify();
floor.addHook("onResponse", async (_request, reply) => {
  handled.floor.push(reply.elapsedTime);
});
let body = "";
floor.get("/floor", (_request, reply) => reply.header("content-type", "application/json; charset=utf-8").send(body));
let floorRead = 0;
floor.get("/floor-sql", async (_request, reply) => {
  await bareDetail(pool, course, `learner${1 + ((floorRead++ * 7919) % learners)}`);
  return reply.header("content-type", "application/json; charset=utf-8").send(body);
});
// The floors of the scale benchmark's reads: the same statement as the service's route, prepared, then its rows sent
// as JSON by a bare route, with nothing else (no authentication, no schema, no logging, no hooks).
floor.get<{ Querystring: { cohorts?: string; exclude_roles?: string } }>("/floor-stats", async (request, reply) => {
  const { cohorts, exclude_roles: excludeRoles } = request.query;
  const values: unknown[] = [course, ...(cohorts ? [Number(cohorts)] : []), ...(excludeRoles ? [excludeRoles.split(",")] : [])];
  const result = await pool.query({ name: `floor_stats_${cohorts ? 1 : 0}${excludeRoles ? 1 : 0}`, text: courseStatsSql(Boolean(cohorts), Boolean(excludeRoles)), values, rowMode: "array" });
  return reply.header("content-type", "application/json; charset=utf-8").send(JSON.stringify(result.rows));
});
floor.get<{ Querystring: { offset?: string; limit?: string } }>("/floor-detail", async (request, reply) => {
  const values = [course, Number(request.query.offset ?? 0), Number(request.query.limit ?? 100)];
  const result = await pool.query({ name: "floor_detail_page", text: pageActiveLearnersSql(false, false), values, rowMode: "array" });
  return reply.header("content-type", "application/json; charset=utf-8").send(JSON.stringify(result.rows));
});
const floorPort = Number(new URL(await floor.listen({ host: "127.0.0.1", port: 0 })).port);

const emptyReport = (): CollectionReport => ({ minor: { count: 0, totalMs: 0, maxMs: 0 }, major: { count: 0, totalMs: 0, maxMs: 0 } });
let collections = emptyReport();
new PerformanceObserver((list) => {
  for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
    // Kind 1 is a scavenge (minor); the others are parts of full collections.
    const figures = entry.detail?.kind === 1 ? collections.minor : collections.major;
    figures.count += 1;
    figures.totalMs += entry.duration;
    figures.maxMs = Math.max(figures.maxMs, entry.duration);
  }
}).observe({ entryTypes: ["gc"] });

process.on("message", (message: ServiceRequest) => {
  if (message === "handled") {
    process.send?.(handled);
    handled = { route: [], floor: [] };
  } else if (message === "collections") {
    process.send?.(collections);
    collections = emptyReport();
  } else if (message === "statements") {
    process.send?.(recorded);
    recorded = [];
  } else if (message === "routed") {
    process.send?.(Object.fromEntries(reads.routed()));
  } else if (message === "stop") {
    reads.stop();
    Promise.all([app.close(), floor.close()])
      .then(() => Promise.all([pool.end(), ...replicaPools.map((replica) => replica.pool.end())]))
      .then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(error);
          process.exit(1);
        },
      );
  } else if ("allocations" in message) {
    const answered =
      message.allocations === "start" ? startAllocationSampling().then(() => "sampling") : stopAllocationSampling(message.requests);
    answered.then(
      (answer) => process.send?.(answer),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  } else {
    body = message.floorBody;
    process.send?.("floor ready");
  }
});
process.send?.({ port, floorPort } satisfies Serving);
