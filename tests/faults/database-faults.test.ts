// Database faults (issue 13): Sign-on, Completion and the editorial app run
// as processes whose every PostgreSQL connection goes through a FaultProxy.
// Under load on every part, the proxy cuts all connections ten times, then
// refuses connections for a few seconds, then PostgreSQL itself terminates
// the services' backends (pg_terminate_backend), then the network stalls
// (no byte goes through, nothing is closed). No process may exit, no
// answer may be a 5xx other than 503, every acknowledged write must be there,
// Completion's aggregates must equal a recomputation, the pushes must arrive,
// and every service must be ready again within 5 s of the database's return.
// Needs DATABASE_URL (a PostgreSQL server); it creates and drops a database of its own.
import { writeFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COURSE_KEY, LEARNERS, REQUEST_TIMEOUT_MS, startFaultSystem, type FaultSystem } from "./support/fault-system.js";
import { allowedOutcomes, csrfTokenOf, HttpClient, type Answer } from "@tessera/test-support/drill";
import { startLoad, type LoadRecord } from "./support/load.js";
import { runShipped, type ServiceProcess } from "@tessera/test-support";
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

/** The background work of each process, by the name its outage lines carry. */
function backgroundWork(system: FaultSystem): { service: ServiceProcess; name: string }[] {
  return [
    { service: system.signon, name: "push delivery" },
    { service: system.signon, name: "Expired-records job" },
    { service: system.signon, name: "Inactivity job" },
    { service: system.completion, name: "stale worker" },
    { service: system.editorial, name: "session sweep" },
  ];
}

/** How many outages `name` has logged the start and the end of in `service`'s output. */
function outageLines(service: ServiceProcess, name: string): { started: number; ended: number } {
  const lines = service.outageLines();
  return {
    started: lines.filter((line) => line.includes(`${name}: database unavailable`)).length,
    ended: lines.filter((line) => line.includes(`${name}: database available again`)).length,
  };
}

/** What the services answered while connections were refused, or while the network stalled. */
interface OutageProbes {
  ready: Map<string, Answer>;
  live: Map<string, Answer>;
  /** Requests that need the database: each must be a 503 with Retry-After. */
  needingDatabase: Map<string, Answer>;
}

/** Asks every service for readiness, liveness, and requests that need the database (JSON APIs and HTML pages). */
async function probe(system: FaultSystem, tally: Tally, signInForm: { client: HttpClient; csrf: string }, openIdToken: string): Promise<OutageProbes> {
  const client = new HttpClient(tally, REQUEST_TIMEOUT_MS);
  const health = async (path: string) =>
    new Map(await Promise.all(system.services.map(async (service) => [service.name, await client.send(`probe ${path}`, service, path)] as const)));
  const [ready, live, needingDatabase] = await Promise.all([
    health("/healthcheck/ready"),
    health("/healthcheck/live"),
    (async () =>
      new Map<string, Answer>(
        await Promise.all([
          (async () =>
            ["Sign-on GET /user.json", await client.send("probe GET /user.json", system.signon, "/user.json", { headers: { authorization: `Bearer ${system.probeAccessToken}` } })] as const)(),
          (async () => ["Sign-on GET /userinfo", await client.send("probe GET /userinfo", system.signon, "/userinfo", { headers: { authorization: `Bearer ${openIdToken}` } })] as const)(),
          (async () =>
            [
              "Sign-on POST /sign-in (page)",
              await signInForm.client.send("probe POST /sign-in", system.signon, "/sign-in", {
                method: "POST",
                headers: { accept: "text/html" },
                form: { _csrf: signInForm.csrf, return_to: "/", email: system.userEmail, password: "faults correct horse battery" },
              }),
            ] as const)(),
          (async () =>
            [
              "Completion GET course detail",
              await client.send("probe GET course detail", system.completion, `/api/completion/v1/course/${COURSE_KEY}/?username=${LEARNERS[0]}`, {
                headers: { authorization: `Bearer ${system.completionToken}` },
              }),
            ] as const)(),
          (async () => ["editorial GET /auth/gds (page)", await client.send("probe GET editorial /auth/gds", system.editorial, "/auth/gds", { headers: { accept: "text/html" } })] as const)(),
        ]),
      ))(),
  ]);
  return { ready, live, needingDatabase };
}

/** The last access token the load's OpenID Connect flow was issued. */
function latestToken(record: LoadRecord): string {
  const token = record.issuedTokens.at(-1);
  if (token === undefined) throw new Error("the load was issued no access token before the outage");
  return token;
}

/** A signed-out browser holding Sign-on's sign-in form (its CSRF token), to post it during an outage. */
async function signInFormOf(system: FaultSystem, tally: Tally): Promise<{ client: HttpClient; csrf: string }> {
  const client = new HttpClient(tally, REQUEST_TIMEOUT_MS);
  for (let attempt = 0; attempt < 20; attempt++) {
    const csrf = csrfTokenOf((await client.send("GET /sign-in", system.signon, "/sign-in", { headers: { accept: "text/html" } })).body);
    if (csrf !== undefined) return { client, csrf };
    await pause(200);
  }
  throw new Error("no sign-in form");
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
  let readyAfterStallMs = 0;
  let refusedForMs = 0;
  let stalledForMs = 0;
  /** How long each phase took (for the report; nothing is asserted on it). */
  const phaseMs: Record<string, number> = {};
  let refused: OutageProbes;
  let stalled: OutageProbes;
  /** Per background work, the outages it logged while connections were refused. */
  const outagesDuringRefusal = new Map<string, number>();
  const readyAfterCutMs: number[] = [];
  const readyAfterTerminationMs: number[] = [];
  let connectionsCut = 0;
  let backendsTerminated = 0;

  beforeAll(async () => {
    let phaseStart = Date.now();
    const phaseDone = (phase: string) => {
      phaseMs[phase] = Date.now() - phaseStart;
      phaseStart = Date.now();
    };
    system = await startFaultSystem(serverUrl as string);
    const load = await startLoad(system, tally);
    record = load.record;
    phaseDone("start");
    await pause(1000);
    // (1) Every connection cut, mid-transaction or wherever it is, ten times under load.
    for (let cut = 0; cut < cuts; cut++) {
      connectionsCut += system.proxy.cutAll();
      readyAfterCutMs.push(await timeToReady(system, Date.now()));
      await pause(400);
    }
    phaseDone("cuts");
    // (2) New connections refused for a few seconds, (3) then accepted again. Every background work is out of
    // the cuts' outages first, and the refusal lasts until each has met it (the hourly jobs run every 2 s here).
    const form = await signInFormOf(system, tally);
    const work = backgroundWork(system);
    await eventually("the background work is over the cuts' outages", 60_000, async () =>
      work.every(({ service, name }) => outageLines(service, name).started === outageLines(service, name).ended),
    );
    const before = new Map(work.map(({ service, name }) => [name, outageLines(service, name).started]));
    system.proxy.cutAll();
    await system.proxy.refuse();
    const refusedAt = Date.now();
    refused = await probe(system, tally, form, latestToken(record));
    await eventually("every background work meets the refusal", 60_000, async () =>
      work.every(({ service, name }) => outageLines(service, name).started > (before.get(name) ?? 0)),
    );
    for (const { service, name } of work) outagesDuringRefusal.set(name, outageLines(service, name).started - (before.get(name) ?? 0));
    await pause(Math.max(0, refusalMs - (Date.now() - refusedAt)));
    await system.proxy.accept();
    refusedForMs = Date.now() - refusedAt;
    readyAfterRefusalMs = await timeToReady(system, Date.now());
    phaseDone("refusal");
    // PostgreSQL ending the services' sessions itself.
    for (let termination = 0; termination < terminations; termination++) {
      await pause(400);
      backendsTerminated += await terminateBackends(system.databaseUrl);
      readyAfterTerminationMs.push(await timeToReady(system, Date.now()));
    }
    phaseDone("terminations");
    // (4) The network stalls: connections stay open, nothing goes through. Requests fail after the statement bound
    // (or the checkout timeout), not hours later; the stall lasts as long as the probes take to be answered.
    await pause(400);
    const stallForm = await signInFormOf(system, tally);
    system.proxy.stall();
    const stalledAt = Date.now();
    try {
      stalled = await probe(system, tally, stallForm, latestToken(record));
    } finally {
      system.proxy.resume();
      stalledForMs = Date.now() - stalledAt;
    }
    readyAfterStallMs = await timeToReady(system, Date.now());
    phaseDone("stall");
    await pause(1000);
    await load.stop();
    phaseDone("load stop");
  });

  afterAll(async () => {
    const figures = {
      cuts,
      connectionsCut,
      refusalMs: refusedForMs,
      stalledForMs,
      terminations,
      backendsTerminated,
      requests: tally.total,
      answered503: tally.count(503),
      answered500: tally.count(500),
      otherServerErrors: tally.failures(),
      processExits: system?.services.filter((service) => service.exit() !== null).map((service) => `${service.name}: ${service.exit()}`) ?? [],
      outageLogLines: system
        ? {
            ...Object.fromEntries(backgroundWork(system).map(({ service, name }) => [name, outageLines(service, name).started])),
          }
        : {},
      readyAfterRefusalMs,
      readyAfterStallMs,
      phaseMs,
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
    expect(readyAfterStallMs).toBeLessThan(readyBoundMs);
    for (const ms of [...readyAfterCutMs, ...readyAfterTerminationMs]) expect(ms).toBeLessThan(readyBoundMs);
  });

  it("keeps every access token it issued, each with an ID token, for /user.json and /userinfo", async () => {
    expect(record.issuedTokens.length).toBeGreaterThan(0);
    expect(record.missingIdTokens).toBe(0);
    const statuses = await Promise.all(
      record.issuedTokens.flatMap((token) =>
        ["/user.json", "/userinfo"].map(async (path) => (await fetch(`${system.signon.url}${path}`, { headers: { authorization: `Bearer ${token}` } })).status),
      ),
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
    const reaggregated = await runShipped("completion-cli", ["reaggregate", COURSE_KEY], { DATABASE_URL: system.databaseUrl });
    expect(reaggregated.code, reaggregated.output).toBe(0);
    expect(await readAggregates()).toEqual(aggregates);
    expect(await readCourses()).toEqual(courses);
  });

  it("logs a worker's outage once per outage, not once per poll", () => {
    // At most one line per fault, with room for a worker that meets one fault in two steps; polling every 50 ms would log hundreds.
    const outages = 2 * (cuts + 1 + terminations + 1);
    for (const { service, name } of backgroundWork(system)) expect(outageLines(service, name).started, name).toBeLessThanOrEqual(outages);
  });

  for (const phase of ["refused", "stalled"] as const) {
    it(`answers as an outage while connections are ${phase}: ready 503 naming the database, live 200, 503 with Retry-After, the plain page for pages`, () => {
      const probes = phase === "refused" ? refused : stalled;
      for (const service of system.services) {
        const ready = probes.ready.get(service.name);
        expect(ready?.status, `${service.name} ready`).toBe(503);
        const body = JSON.parse(ready?.body ?? "{}") as { failed?: string[]; checks?: Record<string, { reason?: string }> };
        expect(body.failed, `${service.name} ready`).toContain("database");
        // Refused: the connection fails at once. Stalled: the check's statement waits, and the check gives up first (or the pool's bound does).
        expect(phase === "refused" ? ["database unavailable"] : ["no answer within 2000 ms", "database unavailable"], `${service.name} ready`).toContain(body.checks?.["database"]?.reason);
        expect(probes.live.get(service.name)?.status, `${service.name} live`).toBe(200);
      }
      for (const [request, answer] of probes.needingDatabase) {
        expect([answer.status, answer.retryAfter], request).toEqual([503, "5"]);
        if (request.endsWith("(page)")) {
          expect(answer.contentType, request).toMatch(/^text\/html/);
          expect(answer.body, request).toContain("<h1>Temporarily unavailable</h1>");
        } else {
          expect(answer.contentType, request).toMatch(/^application\/json/);
        }
      }
    });
  }

  it("runs the hourly jobs, the workers and the session sweep through the outage, and they recover by themselves", async () => {
    for (const { name } of backgroundWork(system)) expect(outagesDuringRefusal.get(name), name).toBeGreaterThan(0);
    // Every outage a background work logged has ended: it works again, without a restart.
    const open = () =>
      backgroundWork(system)
        .map(({ service, name }) => ({ name, ...outageLines(service, name) }))
        .filter(({ started, ended }) => started !== ended);
    await eventually("every background work logs that the database is back", 30_000, async () => open().length === 0).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}: ${JSON.stringify(open())}`);
    });
    // From the outage lines, kept whole: the output keeps only its last 200 kB, which the request log can fill.
    const signonOutages = system.signon.outageLines().join("\n");
    expect(signonOutages).toMatch(/Expired-records job: database available again after/);
    expect(signonOutages).toMatch(/Inactivity job: database available again after/);
  });
});
