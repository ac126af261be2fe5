// The pool of createPool in front of a proxy that cuts and refuses
// connections: no failure may end the process (vitest fails the run on an
// uncaught 'error' event), each one reaches the caller as an error that
// isDatabaseUnavailable recognises, and the pool works again by itself.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import type pg from "pg";
import { createDrizzle, createPool, isDatabaseUnavailable, runMigrations, withStatementTimeout } from "../src/index.js";
import { FaultProxy, useTestDatabase } from "../src/testing/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import * as schema from "./fixtures/schema.js";

const t = await useTestDatabase({ migrations: [fixtureMigrations], schema });
const lines: string[] = [];
let proxy: FaultProxy;
let pool: pg.Pool;

beforeAll(async () => {
  proxy = await FaultProxy.start(t.url);
  pool = createPool({ url: proxy.urlFor(t.url), max: 4, connectionTimeoutMs: 2000, log: { info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`) } });
});
afterAll(async () => {
  await pool.end();
  await proxy.close();
  await t.close();
});
beforeEach(async () => {
  await t.reset();
  lines.length = 0;
});

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

const until = async (condition: () => boolean): Promise<void> => {
  for (let n = 0; n < 200 && !condition(); n++) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe("createPool when connections fail", () => {
  it("survives connections cut while idle and opens new ones on the next query", async () => {
    await Promise.all([1, 2, 3].map(() => pool.query("select pg_sleep(0.01)")));
    expect(pool.idleCount).toBeGreaterThan(0);
    expect(proxy.cutAll()).toBeGreaterThan(0);
    await until(() => pool.idleCount === 0);
    expect((await pool.query<{ n: number }>("select 1 as n")).rows).toEqual([{ n: 1 }]);
  });

  it("survives a connection cut while checked out between statements; the client is dropped on release", async () => {
    const client = await pool.connect();
    await client.query("select 1");
    proxy.cutAll();
    const error = await rejection(client.query("select 1"));
    expect(isDatabaseUnavailable(error)).toBe(true);
    client.release();
    expect((await pool.query<{ n: number }>("select 2 as n")).rows).toEqual([{ n: 2 }]);
  });

  it("survives a cut inside a drizzle transaction, which writes nothing", async () => {
    const db = createDrizzle(pool, schema);
    const error = await rejection(
      db.transaction(async (tx) => {
        await tx.insert(schema.notes).values({ title: "half" });
        proxy.cutAll();
        await tx.insert(schema.notes).values({ title: "written" });
      }),
    );
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(await t.db.select().from(schema.notes)).toEqual([]);
    await db.insert(schema.notes).values({ title: "after" });
    expect((await t.db.select({ title: schema.notes.title }).from(schema.notes))).toEqual([{ title: "after" }]);
  });

  it("gives the connection back when a drizzle transaction's BEGIN fails, so the pool does not shrink", async () => {
    const db = createDrizzle(pool, schema);
    for (let attempt = 0; attempt < pool.options.max + 2; attempt++) {
      await pool.query("select 1");
      pool.once("acquire", () => proxy.cutAll());
      const error = await rejection(db.transaction(async (tx) => tx.insert(schema.notes).values({ title: "never" })));
      expect(isDatabaseUnavailable(error)).toBe(true);
    }
    await until(() => pool.totalCount === 0);
    expect(pool.totalCount).toBe(0);
    await db.transaction(async (tx) => tx.insert(schema.notes).values({ title: "after" }));
    expect(await t.db.select({ title: schema.notes.title }).from(schema.notes)).toEqual([{ title: "after" }]);
  });

  it("keeps drizzle's transaction behaviour: configuration, nested savepoints, rollback of the body's error", async () => {
    const db = createDrizzle(pool, schema);
    const level = await db.transaction(async (tx) => (await tx.execute<{ transaction_isolation: string }>(sql`show transaction_isolation`)).rows[0]?.transaction_isolation, {
      isolationLevel: "serializable",
    });
    expect(level).toBe("serializable");
    const failure = await rejection(
      db.transaction(async (tx) => {
        await tx.insert(schema.notes).values({ title: "outer" });
        await tx.transaction(async (inner) => {
          await inner.insert(schema.notes).values({ title: "inner" });
          inner.rollback();
        }).catch(() => undefined);
        throw new Error("the body failed");
      }),
    );
    expect((failure as Error).message).toBe("the body failed");
    expect(await t.db.select().from(schema.notes)).toEqual([]);
    expect(pool.totalCount - pool.idleCount).toBe(0);
  });

  it("survives a cut while a statement runs", async () => {
    const running = rejection(pool.query("select pg_sleep(1)"));
    await until(() => proxy.open > 0 && pool.idleCount < pool.totalCount);
    await new Promise((resolve) => setTimeout(resolve, 50));
    proxy.cutAll();
    expect(isDatabaseUnavailable(await running)).toBe(true);
  });

  it("answers queries with a recognised error while connections are refused, and works again when they are accepted", async () => {
    proxy.cutAll();
    await proxy.refuse();
    try {
      const errors = await Promise.all([1, 2, 3].map(() => rejection(pool.query("select 1"))));
      expect(errors.map(isDatabaseUnavailable)).toEqual([true, true, true]);
    } finally {
      await proxy.accept();
    }
    expect((await pool.query<{ n: number }>("select 3 as n")).rows).toEqual([{ n: 3 }]);
  });

  it("logs one warning for many connections cut at once and one line when a connection succeeds again", async () => {
    const clients = await Promise.all([1, 2, 3, 4].map(() => pool.connect()));
    for (const client of clients) client.release();
    proxy.cutAll();
    await until(() => pool.totalCount === 0);
    await pool.query("select 1");
    expect(lines).toEqual([
      expect.stringMatching(/^warn database pool: database unavailable \(.+\); retrying until it answers$/),
      expect.stringMatching(/^info database pool: database available again after \d+\.\d s \(\d+ failed attempt\(s\)\)$/),
    ]);
  });

  it.skipIf(t.kind !== "postgres")("prepares a named statement again on the new connection", async () => {
    const named = { name: "fault_test_count", text: "select count(*)::int as n from fixture.notes where title = $1", values: ["x"] };
    expect((await pool.query(named)).rows).toEqual([{ n: 0 }]);
    proxy.cutAll();
    await until(() => pool.totalCount === 0);
    expect((await pool.query(named)).rows).toEqual([{ n: 0 }]);
  });
});

describe("createPool when a connection stalls (no byte goes through, nothing is closed)", () => {
  const boundMs = 500;
  let stallProxy: FaultProxy;
  let bounded: pg.Pool;

  beforeAll(async () => {
    stallProxy = await FaultProxy.start(t.url);
    bounded = createPool({ url: stallProxy.urlFor(t.url), max: 3, connectionTimeoutMs: 2000, statementTimeoutMs: boundMs });
  });
  afterAll(async () => {
    stallProxy.resume();
    await bounded.end();
    await stallProxy.close();
  });

  it("gives a stalled statement up as database unavailable, through pool.query, a checked-out client and drizzle, and works again after the stall", async () => {
    const db = createDrizzle(bounded, schema);
    const client = await bounded.connect();
    await client.query("select 1");
    await bounded.query("select 1");
    stallProxy.stall();
    try {
      const errors = await Promise.all([
        rejection(client.query("select 1")),
        rejection(bounded.query("select 2")),
        rejection(db.select().from(schema.notes)),
        rejection(db.transaction(async (tx) => tx.insert(schema.notes).values({ title: "stalled" }))),
      ]);
      for (const error of errors) expect(isDatabaseUnavailable(error), String(error)).toBe(true);
      expect((errors[0] as Error).message).toMatch(/^Query read timeout: no answer from the database within 0\.5 s$/);
    } finally {
      client.release();
      stallProxy.resume();
    }
    // The stalled connections were dropped: the next statements run on new ones.
    expect((await bounded.query<{ n: number }>("select 4 as n")).rows).toEqual([{ n: 4 }]);
    await db.insert(schema.notes).values({ title: "after the stall" });
    expect(await t.db.select({ title: schema.notes.title }).from(schema.notes)).toEqual([{ title: "after the stall" }]);
  });

  it("leaves the work inside withStatementTimeout(null) unbounded: it waits out a stall and a long statement", async () => {
    await bounded.query("select 1");
    stallProxy.stall();
    let settled = false;
    const waiting = withStatementTimeout(null, () => bounded.query<{ n: number }>("select 5 as n")).finally(() => (settled = true));
    // Several times the bound: a bounded statement would have failed by now.
    await new Promise((resolve) => setTimeout(resolve, 4 * boundMs));
    expect(settled).toBe(false);
    stallProxy.resume();
    expect((await waiting).rows).toEqual([{ n: 5 }]);
    const long = await withStatementTimeout(null, () => createDrizzle(bounded, schema).execute(sql`select pg_sleep(${(3 * boundMs) / 1000}) is null as slept`));
    expect(long.rows).toEqual([{ slept: false }]);
    // A bound of its own for long work: the same statement outlasts a shorter one.
    expect(isDatabaseUnavailable(await rejection(withStatementTimeout(boundMs / 5, () => bounded.query("select pg_sleep(0.5)"))))).toBe(true);
  });

  it("keeps each caller's own bound when a connection is handed over between scoped work and work outside every scope", async () => {
    const single = createPool({ url: stallProxy.urlFor(t.url), max: 1, connectionTimeoutMs: 10_000, statementTimeoutMs: boundMs });
    try {
      // Unbounded work holds the only connection; a caller outside every scope waits for it and gets it from the release.
      let release = () => {};
      let holding = () => {};
      const connectionHeld = new Promise<void>((resolve) => (holding = resolve));
      const scopedWork = withStatementTimeout(null, async () => {
        const client = await single.connect();
        await client.query("select 1");
        const released = new Promise<void>((resolve) => (release = resolve));
        holding();
        await released;
        client.release();
      });
      // Only once the scoped work holds the connection (a fixed pause lost that race on a busy machine).
      await connectionHeld;
      const outside = rejection(single.query("select 2"));
      stallProxy.stall();
      release();
      await scopedWork;
      // The pool's bound, not the unbounded work's that handed the connection over.
      expect(isDatabaseUnavailable(await outside)).toBe(true);
      stallProxy.resume();

      // The other way round: unbounded work that waits for the connection of a caller outside every scope stays unbounded.
      const held = await single.connect();
      await held.query("select 3");
      let settled = false;
      const waiting = withStatementTimeout(null, () => single.query<{ n: number }>("select 4 as n")).finally(() => (settled = true));
      stallProxy.stall();
      held.release();
      await new Promise((resolve) => setTimeout(resolve, 4 * boundMs));
      expect(settled).toBe(false);
      stallProxy.resume();
      expect((await waiting).rows).toEqual([{ n: 4 }]);
    } finally {
      stallProxy.resume();
      await single.end();
    }
  });

  it("does not bound migrations", async () => {
    // An idle connection for the migrations to take: a new one would meet the pool's connection timeout instead.
    await bounded.query("select 1");
    stallProxy.stall();
    const migrating = runMigrations(bounded, [fixtureMigrations]);
    // Several times the statement bound, and still short of the connection timeout.
    await new Promise((resolve) => setTimeout(resolve, 3 * boundMs));
    stallProxy.resume();
    expect((await migrating).map((report) => report.applied)).toEqual([0]);
  });
});
