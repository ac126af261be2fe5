import { createDrizzle, createPool, ReadRouter } from "@tessera/db";
import { FaultProxy } from "@tessera/db/testing";
import Fastify, { type FastifyInstance } from "fastify";
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
 * `options.replica` gives the app a read replica: a pool straight to the database, which the proxy does not touch.
 * `options.sharedClock` runs the proxied app on `direct`'s movable clock.
 */
export async function signonBehindFaultProxy(
  options: { sharedClock?: boolean; replica?: boolean } = {},
): Promise<{ app: FastifyInstance; direct: TestSignon; proxy: FaultProxy; reads: ReadRouter | undefined }> {
  const database = await openTestDatabase();
  const direct = await buildTestSignon(database);
  const proxy = await FaultProxy.start(database.url);
  const pool = createPool({ url: proxy.urlFor(database.url), max: 4, connectionTimeoutMs: 2000 });
  // With `replica`: a second pool straight to the database stands in for a read replica (the same rows, no lag).
  const replica = options.replica === true ? createPool({ url: database.url, max: 4 }) : undefined;
  const reads = replica === undefined ? undefined : new ReadRouter({ primary: pool, replicas: [{ url: database.url, pool: replica }], checkIntervalMs: 200 });
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
    await replica?.end();
    await pool.end();
    await proxy.close();
    await direct.app.close();
    await database.close();
  });
  return { app, direct, proxy, reads };
}
