import { createDrizzle, createPool, ReadRouter } from "@tessera/db";
import { FaultProxy } from "@tessera/db/testing";
import Fastify, { type FastifyInstance } from "fastify";
import type pg from "pg";
import { afterAll } from "vitest";
import signonApp, { signonServerOptions } from "../../src/app.js";
import * as schema from "../../src/db/schema.js";
import { buildTestSignon, openTestDatabase, testConfig, type TestSignon } from "./signon.js";

/** What a database outage looks like to an OAuth client: the body of the 503. */
export const unavailable = { error: "temporarily_unavailable", error_description: "Sign-on cannot reach its database; try again shortly" };

/**
 * Sign-on on a pool that reaches its test database through a {@link FaultProxy}, which can refuse connections
 * (the database is down) or cut them in the middle of a request (the network fails, a server restarts), and
 * `direct`, a second Sign-on on the same database for setting up. Everything is closed after the file's tests.
 * `options.replica` gives the app a read replica: a {@link StandInReplica}, which the proxy does not touch.
 * `options.sharedClock` runs the proxied app on `direct`'s movable clock.
 */
export async function signonBehindFaultProxy(
  options: { sharedClock?: boolean; replica?: boolean } = {},
): Promise<{ app: FastifyInstance; direct: TestSignon; proxy: FaultProxy; reads: ReadRouter | undefined; replica: StandInReplica | undefined }> {
  const database = await openTestDatabase();
  const direct = await buildTestSignon(database);
  const proxy = await FaultProxy.start(database.url);
  const pool = createPool({ url: proxy.urlFor(database.url), max: 4, connectionTimeoutMs: 2000 });
  const replica = options.replica === true ? new StandInReplica(database.url) : undefined;
  // A lag limit well past any test's length: a replica held behind stays within it, however slow the machine.
  const reads =
    replica === undefined ? undefined : new ReadRouter({ primary: pool, replicas: [{ url: database.url, pool: replica.pool }], checkIntervalMs: 200, maxLagMs: 600_000 });
  await reads?.check();
  const config = { ...testConfig(), preparedStatements: true };
  const app = Fastify(signonServerOptions(config, false));
  await app.register(signonApp, {
    config,
    db: createDrizzle(pool, schema),
    pool,
    ...(reads ? { reads } : {}),
    ...(options.sharedClock ? { now: direct.clock.now } : {}),
  });
  await app.ready();
  afterAll(async () => {
    reads?.stop();
    await app.close();
    await replica?.pool.end();
    await pool.end();
    await proxy.close();
    await direct.app.close();
    await database.close();
  });
  return { app, direct, proxy, reads, replica };
}

/**
 * A read replica for tests: a pool straight to the database (the same rows, no lag), which tells the router's
 * check it is recovering and has replayed everything the primary has written, unless `hold` keeps the position
 * it reports where the primary's was: a replica that has not replayed what came after.
 */
export class StandInReplica {
  readonly pool: pg.Pool;
  #held: string | null = null;

  constructor(url: string) {
    this.pool = createPool({ url, max: 4 });
    const query = this.pool.query.bind(this.pool) as (...args: unknown[]) => Promise<pg.QueryResult>;
    const check = async (): Promise<pg.QueryResult> => {
      const lsn = this.#held ?? (await this.#primaryPosition());
      return { rows: [{ recovering: true, lsn }], rowCount: 1 } as unknown as pg.QueryResult;
    };
    (this.pool as { query: unknown }).query = (...args: unknown[]) =>
      typeof args[0] === "string" && args[0].includes("pg_last_wal_replay_lsn") ? check() : query(...args);
  }

  /** Reports the primary's position now from here on: what is written after is not replayed. */
  async hold(): Promise<void> {
    this.#held = await this.#primaryPosition();
  }

  /** Reports the primary's position again: everything is replayed. */
  release(): void {
    this.#held = null;
  }

  async #primaryPosition(): Promise<string> {
    const { rows } = await this.pool.query<{ lsn: string }>("select pg_current_wal_insert_lsn()::text as lsn");
    return (rows[0] as { lsn: string }).lsn;
  }
}
