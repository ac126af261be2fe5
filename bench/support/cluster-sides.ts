// The sides the benchmarks on the failover tests' Patroni cluster share (bench/replicas, bench/tls): autocannon's
// load, and Completion on the scale bench's course, each in a process of its own.
import autocannon from "autocannon";
import { createDrizzle, createPool, runMigrations } from "@tessera/db";
import { COMPLETION_MIGRATIONS, completionSchema, DEFAULT_AGGREGATOR_TYPES, loadBulkData } from "@tessera/completion";
import { fork, type ChildProcess } from "node:child_process";
import pg from "pg";
import { CourseStructures } from "../../packages/completion/src/domain/course-structures.js";
import { inDatabase, type FailoverCluster } from "@tessera/test-support/drill";
import type { Serving } from "../completion/serve.js";
import { COURSE, courseTree, generate } from "../scale/completion.js";

export interface Measured {
  rps: number;
  p99: number;
  failed: number;
}

export async function load(url: string, connections: number, duration: number, options: { method?: "GET" | "POST"; headers?: Record<string, string>; nextBody?: () => string } = {}): Promise<Measured> {
  const { nextBody } = options;
  const result = await autocannon({
    url,
    connections,
    duration,
    method: options.method ?? "GET",
    headers: options.headers ?? { authorization: "Bearer bench" },
    ...(nextBody ? { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, body: nextBody() }) }] } : {}),
  });
  return { rps: result.requests.average, p99: result.latency.p99, failed: result.non2xx + result.errors };
}

export function startCompletion(url: string, readUrls: string[], learners: number): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(new URL("../completion/serve.ts", import.meta.url).pathname, [url, COURSE, String(learners)], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, BENCH_READ_URLS: readUrls.join(" ") },
    // Its request log goes to standard output, as the server's does: to /dev/null here.
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", (message: Serving) => resolve({ child, port: message.port }));
    child.once("exit", (code) => reject(new Error(`the Completion service exited (${String(code)})`)));
  });
}

export async function stopCompletion(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.send("stop");
  await exited;
}

/** The course of the scale bench with `learners` learners in `database`, through the primary; returns once every replica has it. */
export async function prepareCompletion(cluster: FailoverCluster, database: string, learners: number): Promise<string> {
  const url = await cluster.createDatabase(database);
  const pool = createPool({ url, max: 2 });
  const client = new pg.Client({ connectionString: url });
  try {
    await runMigrations(pool, [COMPLETION_MIGRATIONS]);
    await loadBulkData(createDrizzle(pool, completionSchema), new CourseStructures(), new Set(DEFAULT_AGGREGATOR_TYPES), { courses: [{ course_key: COURSE, structure: courseTree() }] }, new Date());
    await client.connect();
    await client.query(`insert into completion.cohorts (id, course_key, name) values (1, $1, 'A'), (2, $1, 'B'), (3, $1, 'C')`, [COURSE]);
    await generate(client, 0, learners, "block-v1:ScaleX+Big101+2026+type@course+block@course");
  } finally {
    await client.end();
    await pool.end();
  }
  for (const node of cluster.nodes) {
    const replica = new pg.Client({ connectionString: inDatabase(node.url, database) });
    await replica.connect();
    try {
      for (let tries = 0; ; tries++) {
        const { rows } = await replica.query<{ n: number }>("select count(*)::int as n from completion.learners").catch(() => ({ rows: [{ n: 0 }] }));
        if ((rows[0]?.n ?? 0) >= learners) break;
        if (tries > 600) throw new Error(`${node.name} did not replay the generated learners`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await replica.end();
    }
  }
  return url;
}

