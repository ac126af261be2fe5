// Database faults (issue 13): Sign-on, Completion and the editorial app run
// as processes whose every PostgreSQL connection goes through a FaultProxy.
// Under load on every part, the proxy cuts all connections ten times, then
// refuses connections for a few seconds, then PostgreSQL itself terminates
// the services' backends (pg_terminate_backend). No process may exit, no
// answer may be a 5xx other than 503, every acknowledged write must be there,
// Completion's aggregates must equal a recomputation, the pushes must arrive,
// and every service must be ready again within 5 s of the database's return.
// Needs DATABASE_URL (a PostgreSQL server); it creates and drops a database of its own.
import { writeFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COURSE_KEY, LEARNERS, startFaultSystem, type FaultSystem } from "./support/fault-system.js";
import { allowedOutcomes, startLoad, type LoadRecord } from "./support/load.js";
import { runToExit } from "./support/service-process.js";
import { Tally } from "./support/tally.js";

const serverUrl = process.env["DATABASE_URL"];
if (!serverUrl) console.warn("tests/faults skipped: set DATABASE_URL to a PostgreSQL server (CI: postgres://postgres@127.0.0.1:5432/test) to run the database fault test");

/** How many times every connection is cut under load (FAULT_CUTS, default 10). */
const cuts = Number(process.env["FAULT_CUTS"] ?? "10");
/** How long connections are refused, as while PostgreSQL restarts. */
const refusalMs = 3000;
/** How many times PostgreSQL terminates the services' backends. */
const terminations = 3;
/** The issue's bound on readiness after the database returns. */
const readyBoundMs = 5000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Milliseconds until every service answers `/healthcheck/ready` with 200, polling every 25 ms (gives up after 30 s). */
async function timeToReady(system: FaultSystem, since: number): Promise<number> {
  const waiting = new Set(system.services);
  const last = new Map<string, string>();
  while (waiting.size > 0 && Date.now() - since < 30_000) {
    await Promise.all(
      [...waiting].map(async (service) => {
        const response = await fetch(`${service.url}/healthcheck/ready`).catch(() => null);
        last.set(service.name, `${response?.status ?? "no answer"} ${(await response?.text()) ?? ""}`);
        if (response?.status === 200) waiting.delete(service);
      }),
    );
    if (waiting.size > 0) await pause(25);
  }
  if (waiting.size > 0) console.warn(`not ready after 30 s: ${[...waiting].map((service) => `${service.name}: ${last.get(service.name)}`).join("; ")}`);
  return Date.now() - since;
}

/** Terminates every backend on the run's database but this one: what a failover or `pg_terminate_backend` does. */
async function terminateBackends(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on("error", () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()) terminated",
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Polls `condition` every 100 ms until it holds; throws with `what` after `ms`. */
async function eventually(what: string, ms: number, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await pause(100);
  }
}

describe.skipIf(!serverUrl)("Sign-on, Completion and the editorial app while the database fails", () => {
  let system: FaultSystem;
  const tally = new Tally();
  let record: LoadRecord;
  let readyAfterRefusalMs = 0;
  const readyAfterCutMs: number[] = [];
  const readyAfterTerminationMs: number[] = [];
  let connectionsCut = 0;
  let backendsTerminated = 0;

  beforeAll(async () => {
    system = await startFaultSystem(serverUrl as string);
    const load = await startLoad(system, tally);
    record = load.record;
    await pause(1000);
    // (1) Every connection cut, mid-transaction or wherever it is, ten times under load.
    for (let cut = 0; cut < cuts; cut++) {
      connectionsCut += system.proxy.cutAll();
      readyAfterCutMs.push(await timeToReady(system, Date.now()));
      await pause(400);
    }
    // (2) New connections refused for a few seconds, (3) then accepted again.
    system.proxy.cutAll();
    await system.proxy.refuse();
    await pause(refusalMs);
    await system.proxy.accept();
    readyAfterRefusalMs = await timeToReady(system, Date.now());
    // PostgreSQL ending the services' sessions itself.
    for (let termination = 0; termination < terminations; termination++) {
      await pause(400);
      backendsTerminated += await terminateBackends(system.databaseUrl);
      readyAfterTerminationMs.push(await timeToReady(system, Date.now()));
    }
    await pause(1000);
    await load.stop();
  });

  afterAll(async () => {
    const figures = {
      cuts,
      connectionsCut,
      refusalMs,
      terminations,
      backendsTerminated,
      requests: tally.total,
      answered503: tally.count(503),
      answered500: tally.count(500),
      otherServerErrors: tally.failures(),
      processExits: system?.services.filter((service) => service.exit() !== null).map((service) => `${service.name}: ${service.exit()}`) ?? [],
      outageLogLines: system
        ? {
            "push delivery": system.signon.output().split("\n").filter((line) => line.includes("push delivery: database unavailable")).length,
            "stale worker": system.completion.output().split("\n").filter((line) => line.includes("stale worker: database unavailable")).length,
          }
        : {},
      readyAfterRefusalMs,
      readyAfterCutMsMax: Math.max(0, ...readyAfterCutMs),
      readyAfterTerminationMsMax: Math.max(0, ...readyAfterTerminationMs),
      byRequest: tally.summary(),
    };
    console.log(`database fault run: ${JSON.stringify(figures, null, 2)}`);
    const reportFile = process.env["FAULT_REPORT_FILE"];
    if (reportFile) writeFileSync(reportFile, `${JSON.stringify(figures, null, 2)}\n`);
    await system?.close();
  });

  it("keeps every process running", () => {
    for (const service of system.services) expect(service.exit(), `${service.name} exited:\n${service.output().slice(-5000)}`).toBeNull();
  });

  it("answers no 5xx other than 503, and every request gets an answer", () => {
    expect(tally.failures()).toEqual([]);
    // The load really ran through the faults: answers of each kind, and some of them 503.
    const succeeded = { "POST /token": 200, "GET /user.json": 200, "POST /users/:uid/permissions": 303, "POST completion-batch": 200, "GET course detail": 200, "GET editorial /auth/gds": 302 };
    for (const [kind, status] of Object.entries(succeeded)) expect(tally.counts.get(kind)?.get(status) ?? 0, kind).toBeGreaterThan(0);
    expect(tally.count(503)).toBeGreaterThan(0);
  });

  it("is ready again within 5 s of the database's return, each time", () => {
    expect(readyAfterRefusalMs).toBeLessThan(readyBoundMs);
    for (const ms of [...readyAfterCutMs, ...readyAfterTerminationMs]) expect(ms).toBeLessThan(readyBoundMs);
  });

  it("keeps every access token it issued", async () => {
    expect(record.issuedTokens.length).toBeGreaterThan(0);
    const statuses = await Promise.all(
      record.issuedTokens.map(async (token) => (await fetch(`${system.signon.url}/user.json`, { headers: { authorization: `Bearer ${token}` } })).status),
    );
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  });

  it("keeps the last acknowledged permission grid, and pushes it to the editorial app", async () => {
    const held = async () =>
      (
        await system.pool.query<{ permission: string }>("select permission from signon.user_permissions where user_uid = $1 and application_id = $2 order by permission", [
          system.gridUser.uid,
          system.editorialAppId,
        ])
      ).rows.map((row) => row.permission);
    const adminHeld = (await held()).includes("admin");
    expect(allowedOutcomes(record.gridPosts).map((ticked) => ticked ?? false)).toContain(adminHeld);
    // Every push goes out once the database is back: none pending, and the editorial app holds what Sign-on holds.
    await eventually("the push outbox drains", 60_000, async () => {
      const { rows } = await system.pool.query<{ n: number }>("select count(*)::int as n from signon.push_deliveries where status <> 'delivered'");
      return rows[0]?.n === 0;
    });
    const stored = await system.pool.query<{ permissions: string[] }>("select permissions from signon_client.users where uid = $1", [system.gridUser.uid]);
    expect(stored.rows[0]?.permissions.slice().sort()).toEqual(await held());
  });

  it("keeps every acknowledged completion, and aggregates equal to a recomputation", async () => {
    const { rows } = await system.pool.query<{ username: string; block_key: string; completion: number }>(
      "select l.username, c.block_key, c.completion from completion.block_completions c join completion.learners l on l.id = c.learner_id where c.course_key = $1",
      [COURSE_KEY],
    );
    const stored = new Map(rows.map((row) => [`${row.username} ${row.block_key}`, row.completion]));
    for (const username of LEARNERS) {
      for (const [block, attempts] of record.batches.get(username) ?? []) {
        expect(allowedOutcomes(attempts), `${username} ${block}`).toContain(stored.get(`${username} ${block}`));
      }
    }
    const readAggregates = async () =>
      (
        await system.pool.query(
          "select learner_id, block_key, aggregation_name, earned, possible, percent from completion.aggregates where course_key = $1 order by learner_id, block_key, aggregation_name",
          [COURSE_KEY],
        )
      ).rows;
    const readCourses = async () =>
      (await system.pool.query("select learner_id, course_earned, course_possible, course_percent from completion.enrollments where course_key = $1 order by learner_id", [COURSE_KEY]))
        .rows;
    const aggregates = await readAggregates();
    const courses = await readCourses();
    expect(aggregates.length).toBeGreaterThan(0);
    const reaggregated = await runToExit({ entry: "packages/completion/src/cli.ts", args: ["reaggregate", COURSE_KEY], env: { DATABASE_URL: system.databaseUrl } });
    expect(reaggregated.code, reaggregated.output).toBe(0);
    expect(await readAggregates()).toEqual(aggregates);
    expect(await readCourses()).toEqual(courses);
  });

  it("logs a worker's outage once per outage, not once per poll", () => {
    // At most one line per fault, with room for a worker that meets one fault in two steps; polling every 50 ms would log hundreds.
    const outages = 2 * (cuts + 1 + terminations);
    const starts = system.signon.output().split("\n").filter((line) => line.includes("push delivery: database unavailable")).length;
    expect(starts).toBeLessThanOrEqual(outages);
    const staleStarts = system.completion.output().split("\n").filter((line) => line.includes("stale worker: database unavailable")).length;
    expect(staleStarts).toBeLessThanOrEqual(outages);
  });
});
