import type pg from "pg";
import { inject } from "vitest";
import { createDrizzle, type Database } from "../drizzle.js";
import { startEmbeddedServer } from "../embedded/embedded-server.js";
import { runMigrations, type MigrationSet } from "../migrations.js";
import { createPool } from "../pool.js";
import { leaseFromBroker } from "./broker.js";
import { BROKER_KEY } from "./broker-key.js";
import { recreateDatabase, workerDatabaseName } from "./postgres-database.js";
import { truncateSchemas } from "./reset.js";
import { testLogger } from "./test-logger.js";

/** Options of {@link useTestDatabase}. */
export interface TestDatabaseOptions<TSchema extends Record<string, unknown>> {
  /** The service's migrations; every table of these schemas is emptied by `reset()`. */
  migrations: readonly MigrationSet[];
  /** Schema module for drizzle's relational queries. */
  schema?: TSchema;
  /**
   * PostgreSQL server to use instead of an embedded one. Defaults to
   * `process.env.DATABASE_URL`; pass `null` to always use the embedded server.
   */
  url?: string | null;
  /** Distinguishes the per-worker databases of different suites on one server (default: the schema names). */
  label?: string;
}

/** A migrated database for one test file. */
export interface TestDatabase<TSchema extends Record<string, unknown>> {
  /** Connection string, for code under test that takes one. */
  url: string;
  pool: pg.Pool;
  db: Database<TSchema>;
  /** `"embedded"` (in-memory PGlite) or `"postgres"` (a database on `DATABASE_URL`'s server). */
  kind: "embedded" | "postgres";
  /** Empties every table of the migrated schemas and restarts their sequences. */
  reset(): Promise<void>;
  /** Ends the pool and stops an embedded server. */
  close(): Promise<void>;
}

/**
 * Gives a test file a freshly migrated database.
 *
 * - Without `DATABASE_URL`: an in-memory PGlite server in a worker thread.
 *   With the package's global setup registered, it is the server of this
 *   vitest worker slot, booted once per run and emptied (`reset()`) before
 *   the file gets it; otherwise a server private to this test file.
 * - With `DATABASE_URL`: the database `<name>_<label>_w<VITEST_POOL_ID>` on
 *   that server, dropped and created again, so files running in parallel
 *   never share one. It is left in place after `close()` for inspection.
 *
 * @example
 * const t = await useTestDatabase({ migrations: [{ schema: "signon", folder }] });
 * afterAll(() => t.close());
 * beforeEach(() => t.reset());
 */
export async function useTestDatabase<TSchema extends Record<string, unknown> = Record<string, never>>(
  options: TestDatabaseOptions<TSchema>,
): Promise<TestDatabase<TSchema>> {
  const baseUrl = options.url === undefined ? process.env["DATABASE_URL"] : options.url;
  const schemas = options.migrations.map((set) => set.schema);
  const slot = process.env["VITEST_POOL_ID"] ?? String(process.pid);
  const brokerUrl = brokerOfThisRun();
  let url: string;
  let stopServer: () => Promise<void> = async () => {};
  if (baseUrl !== undefined && baseUrl !== null && baseUrl !== "") {
    const label = options.label ?? (schemas.join("_") || "db");
    url = await recreateDatabase(baseUrl, workerDatabaseName(baseUrl, label, slot));
  } else if (brokerUrl !== undefined) {
    url = await leaseFromBroker(brokerUrl, slot);
  } else {
    const server = await startEmbeddedServer({ log: testLogger });
    url = server.url;
    stopServer = () => server.close();
  }

  const pool = createPool({ url, max: 4 });
  try {
    await runMigrations(pool, options.migrations);
    // A slot's server keeps what the previous file of the slot left.
    await truncateSchemas(pool, schemas);
  } catch (error) {
    await pool.end();
    await stopServer();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    url,
    pool,
    db: createDrizzle(pool, options.schema),
    kind: baseUrl ? "postgres" : "embedded",
    reset: () => truncateSchemas(pool, schemas),
    close: () =>
      (closing ??= (async () => {
        try {
          await pool.end();
        } finally {
          await stopServer();
        }
      })()),
  };
}

/** The broker URL provided by the global setup, if the project registered it. */
function brokerOfThisRun(): string | undefined {
  try {
    return inject(BROKER_KEY);
  } catch {
    // Not inside a vitest test file.
    return undefined;
  }
}
