// Push delivery (S13, S14) on real PostgreSQL, to local receivers on real ports:
//
//   1. fan-out: one change (a user's name) of a user known to 50 applications,
//      timed from the call that commits it until all 50 receivers have the new
//      state (BENCH_FANOUT_ROUNDS rounds, default 5; median and worst reported);
//   2. drain: 10,000 queued deliveries (200 users × 50 applications) drained
//      by a worker started afterwards: time until every receiver has its
//      requests, and deliveries per second.
//
//   node --import tsx bench/push/run.ts
//
// It creates the database tessera_bench_push on DATABASE_URL's server
// (default postgres://postgres@127.0.0.1:5432/postgres) and drops it at the
// end. The worker runs in this process with the server's defaults
// (SIGNON_PUSH_CONCURRENCY, default 64) and sends with Node's fetch.
import { createServer, type Server } from "node:http";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { updateUserDetails, createUser } from "../../packages/signon/src/accounts/manage-users.js";
import { registerApplication } from "../../packages/signon/src/applications/register-application.js";
import { loadConfig } from "../../packages/signon/src/config.js";
import type { SignonContext } from "../../packages/signon/src/context.js";
import { openSignonDatabase } from "../../packages/signon/src/database.js";
import { statementRunner } from "../../packages/signon/src/db/statements.js";
import { PushDeliveryService } from "../../packages/signon/src/pushes/delivery-service.js";
import { queuePushes } from "../../packages/signon/src/repositories/push-deliveries.js";

const applicationCount = 50;
const drainUsers = 200;
const fanoutRounds = Number(process.env.BENCH_FANOUT_ROUNDS ?? 5);
const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const databaseName = "tessera_bench_push";

/** A receiver that answers every push `200 {}` and remembers the last PUT body per user. */
interface Receiver {
  server: Server;
  url: string;
  count: number;
  lastName: Map<string, string>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { server: createServer(), url: "", count: 0, lastName: new Map() };
  receiver.server.keepAliveTimeout = 60_000;
  receiver.server.on("request", (request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      receiver.count += 1;
      if (request.method === "PUT") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { user: { uid: string; name: string } };
        receiver.lastName.set(body.user.uid, body.user.name);
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => receiver.server.listen(0, "127.0.0.1", resolve));
  const address = receiver.server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  receiver.url = `http://127.0.0.1:${address.port}`;
  return receiver;
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${databaseName} with (force)`);
  await admin.query(`create database ${databaseName}`);
  const url = new URL(serverUrl);
  url.pathname = `/${databaseName}`;
  const config = loadConfig(
    { SIGNON_PUSH_CONCURRENCY: process.env.SIGNON_PUSH_CONCURRENCY, DATABASE_URL: url.href, SIGNON_ARGON2_MEMORY_KIB: "64", SIGNON_ARGON2_TIME_COST: "1" },
    "cli",
  );
  const database = await openSignonDatabase(config);
  const receivers: Receiver[] = [];
  let worker: PushDeliveryService | undefined;
  try {
    const ctx: SignonContext = { db: database.db, statements: statementRunner(database.pool, true), config, now: () => new Date() };
    for (let n = 0; n < applicationCount; n++) receivers.push(await startReceiver());
    const applicationIds: string[] = [];
    for (const [n, receiver] of receivers.entries()) {
      const { application } = await registerApplication(ctx, { name: `App ${n}`, redirectUris: [`${receiver.url}/auth/gds/callback`] });
      applicationIds.push(application.id);
    }
    const grantAll = async (uid: string) => {
      await database.pool.query(
        "insert into signon.user_permissions (user_uid, application_id, permission, created_at) select $1, unnest($2::uuid[]), 'signin', now()",
        [uid, applicationIds],
      );
    };
    const total = () => receivers.reduce((sum, receiver) => sum + receiver.count, 0);

    // 1. One change fanned out to 50 applications.
    worker = new PushDeliveryService(ctx, { concurrency: config.pushes.concurrency, pollIntervalMs: config.pushes.pollIntervalMs });
    const running = worker;
    const wakingCtx: SignonContext = { ...ctx, pushesQueued: () => running.wake() };
    worker.start();
    const person = await createUser(ctx, { email: "fan@example.org", name: "Fan Out" });
    await grantAll(person.uid);
    // Warm-up: the first push to each application issues its push token and opens its connection.
    await updateUserDetails(wakingCtx, person.email, { name: "warm-up" });
    await waitFor(() => receivers.every((receiver) => receiver.lastName.get(person.uid) === "warm-up"), 30_000);
    const fanout: number[] = [];
    for (let round = 0; round < fanoutRounds; round++) {
      const name = `Fan Out ${round}`;
      const started = performance.now();
      await updateUserDetails(wakingCtx, person.email, { name });
      await waitFor(() => receivers.every((receiver) => receiver.lastName.get(person.uid) === name), 30_000);
      fanout.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await worker.stop();

    // 2. 10,000 queued deliveries drained.
    const queuedBefore = total();
    const now = new Date();
    for (let n = 0; n < drainUsers; n++) {
      const user = await createUser(ctx, { email: `drain${n}@example.org`, name: `Drain ${n}` });
      await grantAll(user.uid);
      await queuePushes(database.db, { userUid: user.uid, kinds: ["update"], targets: { applicationsOfUser: "token-or-permission" }, now });
    }
    const queued = Number((await database.pool.query<{ n: string }>("select count(*) as n from signon.push_deliveries where status = 'pending'")).rows[0]?.n);
    worker = new PushDeliveryService(ctx, { concurrency: config.pushes.concurrency, pollIntervalMs: config.pushes.pollIntervalMs });
    const drainStarted = performance.now();
    worker.start();
    // Drained: every receiver has its requests and every row is recorded as delivered.
    await waitFor(() => total() - queuedBefore >= queued, 120_000);
    const pending = async () => Number((await database.pool.query<{ n: string }>("select count(*) as n from signon.push_deliveries where status <> 'delivered'")).rows[0]?.n);
    let left = await pending();
    while (left > 0 && performance.now() - drainStarted < 120_000) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      left = await pending();
    }
    const drainMs = performance.now() - drainStarted;
    const received = total() - queuedBefore;
    await worker.stop();

    console.log(`Push delivery on PostgreSQL (${serverUrl}), worker concurrency ${config.pushes.concurrency}, ${applicationCount} local receivers`);
    console.log(`fan-out: one change to ${applicationCount} applications, ${fanoutRounds} rounds: median ${median(fanout).toFixed(0)} ms, worst ${Math.max(...fanout).toFixed(0)} ms (target: under 1000 ms)`);
    console.log(
      `drain: ${queued} queued deliveries in ${(drainMs / 1000).toFixed(2)} s = ${Math.round((queued / drainMs) * 1000)} deliveries/s (target: at least 1000/s); requests received: ${received}; rows not delivered: ${left}`,
    );
  } finally {
    await worker?.stop();
    await Promise.all(receivers.map((receiver) => new Promise((resolve) => { receiver.server.closeAllConnections(); receiver.server.close(resolve); })));
    await database.close();
    await admin.query(`drop database if exists ${databaseName} with (force)`);
    await admin.end();
  }
}

await main();
