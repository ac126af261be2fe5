// A read replica that freezes (a paused machine, SIGSTOP: its kernel keeps the connections and accepts new ones,
// nothing answers), played by a real PostgreSQL server reached through a proxy that stops forwarding bytes. Reads
// sent to it fail within DATABASE_READ_TIMEOUT_MS rather than the primary's 30 s statement bound, are answered from
// the primary, and the replica is skipped from then on, until a check finds it answering again.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type pg from "pg";
import { createDrizzle, createPool, createReadReplicaPool, ReadRouter } from "../src/index.js";
import { FaultProxy, useTestDatabase } from "../src/testing/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import * as schema from "./fixtures/schema.js";

const t = await useTestDatabase({ migrations: [fixtureMigrations], schema });
/** The replica's limit in this test; a read that waited the primary's statement bound would take 30 s. */
const readTimeoutMs = 1000;
/** Generous: what shows a read did not wait for the 30 s bound, on a busy machine. */
const farBelowThePrimarysBound = 10_000;
const lines: string[] = [];
let proxy: FaultProxy;
let primary: pg.Pool;
let replica: pg.Pool;
let router: ReadRouter;

beforeAll(async () => {
  proxy = await FaultProxy.start(t.url);
  primary = createPool({ url: t.url, max: 4 });
  const replicaUrl = proxy.urlFor(t.url);
  const log = { info: (message: string) => lines.push(`info ${message}`), warn: (message: string) => lines.push(`warn ${message}`) };
  replica = createReadReplicaPool({ url: replicaUrl, max: 4, timeoutMs: readTimeoutMs, log });
  // Checked only when a test says so: what skips the frozen replica here is the failed read itself.
  router = new ReadRouter({ primary, replicas: [{ url: replicaUrl, pool: replica }], checkIntervalMs: 3_600_000, checkTimeoutMs: readTimeoutMs, log });
});
afterAll(async () => {
  router.stop();
  await Promise.all([primary.end(), replica.end()]);
  await proxy.close();
  await t.close();
});
beforeEach(async () => {
  await t.reset();
  await t.db.insert(schema.notes).values([{ title: "first" }, { title: "second" }]);
  await router.check();
  expect(router.pool()).toBe(replica);
  lines.length = 0;
});
afterEach(async () => {
  proxy.resume();
  proxy.cutAll();
});

/** The notes' titles, read as a routed read: drizzle on whichever pool the router gives. */
async function readTitles(): Promise<string[]> {
  const db = createDrizzle(router.pool(), schema);
  return (await db.select({ title: schema.notes.title }).from(schema.notes).orderBy(schema.notes.title)).map((row) => row.title);
}

/** `work`'s result and how long it took, in milliseconds. */
async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}

const replicaWarnings = () => lines.filter((line) => line.startsWith("warn database: read replica"));

describe("a read replica that freezes", () => {
  it("answers reads on open connections from the primary within the limit, skips the replica at once and says so once", async () => {
    // Open connections to the replica, idle in its pool.
    expect(await Promise.all([readTitles(), readTitles()])).toEqual([
      ["first", "second"],
      ["first", "second"],
    ]);
    expect(replica.idleCount).toBeGreaterThan(0);
    const retriedBefore = router.retriedOnPrimary().get(router.replicas()[0]?.name ?? "") ?? 0;

    proxy.stall();
    // Three reads routed to the replica before any of them fails.
    const { result, ms } = await timed(() => Promise.all([readTitles(), readTitles(), readTitles()]));
    expect(result).toEqual([
      ["first", "second"],
      ["first", "second"],
      ["first", "second"],
    ]);
    expect(ms).toBeLessThan(farBelowThePrimarysBound);
    expect(router.replicas()[0]).toMatchObject({ reachable: false, lagMs: null });
    expect((router.retriedOnPrimary().get(router.replicas()[0]?.name ?? "") ?? 0) - retriedBefore).toBe(3);
    expect(replicaWarnings()).toEqual([expect.stringMatching(/^warn database: read replica 127\.0\.0\.1:\d+\/\S+ cannot be reached \(.+\); reads go elsewhere until it answers$/)]);

    // The next reads go to the primary without trying the replica, and take no time waiting for it.
    expect(router.pool()).toBe(primary);
    const next = await timed(() => readTitles());
    expect(next.result).toEqual(["first", "second"]);
    expect(next.ms).toBeLessThan(readTimeoutMs);
    // A check of a server still frozen fails within its own limit, and says nothing more.
    await router.check();
    expect(router.pool()).toBe(primary);
    expect(replicaWarnings()).toHaveLength(1);

    // Thawed, it serves again from the next check on.
    proxy.resume();
    await router.check();
    expect(router.replicas()[0]).toMatchObject({ reachable: true, lagMs: 0 });
    expect(router.pool()).toBe(replica);
    expect(await readTitles()).toEqual(["first", "second"]);
    expect(lines.filter((line) => line.startsWith("info database: read replica"))).toEqual([expect.stringMatching(/answers/)]);
  });

  it("answers reads that need a new connection, which it accepts and never answers, from the primary within the limit", async () => {
    // No connection open: each read must connect, and the frozen server's kernel (here the proxy) accepts it.
    proxy.cutAll();
    for (let n = 0; n < 100 && replica.totalCount > 0; n++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(replica.totalCount).toBe(0);
    proxy.stall();
    const { result, ms } = await timed(() => readTitles());
    expect(result).toEqual(["first", "second"]);
    expect(ms).toBeLessThan(farBelowThePrimarysBound);
    expect(router.replicas()[0]?.reachable).toBe(false);
    expect(router.pool()).toBe(primary);
  });

  it("answers a read that checks out a connection (a transaction, a cursor) with one of the primary's", async () => {
    proxy.cutAll();
    for (let n = 0; n < 100 && replica.totalCount > 0; n++) await new Promise((resolve) => setTimeout(resolve, 10));
    proxy.stall();
    const db = createDrizzle(router.pool(), schema);
    const { result, ms } = await timed(() => db.transaction(async (tx) => (await tx.select({ title: schema.notes.title }).from(schema.notes)).length));
    expect(result).toBe(2);
    expect(ms).toBeLessThan(farBelowThePrimarysBound);
    expect(router.replicas()[0]?.reachable).toBe(false);
  });

  it("leaves a read that fails for another reason (a bad query) to fail, on a replica it keeps using", async () => {
    const db = createDrizzle(router.pool(), schema);
    await expect(db.execute("select * from no_such_table")).rejects.toThrow();
    expect(router.replicas()[0]?.reachable).toBe(true);
    expect(router.pool()).toBe(replica);
    expect(replicaWarnings()).toEqual([]);
  });
});
