import type pg from "pg";
import { inject } from "vitest";
import { createDrizzle, type Database } from "../drizzle.js";
import { runMigrations, type MigrationSet } from "../migrations.js";
import { createPool } from "../pool.js";
import { recreateDatabase, workerDatabaseName } from "./postgres-database.js";
import { schemaEmptier, truncateSchemas } from "./reset.js";
import { workerDatabaseFromTemplate } from "./template-database.js";
import { TEST_SERVER_KEY } from "./test-server-key.js";
import { startTestServer } from "./test-server.js";

/** Options of {@link useTestDatabase}. */
export interface TestDatabaseOptions<TSchema extends Record<string, unknown>> {
  /** The service's migrations; every table of these schemas is emptied by `reset()`. */
  migrations: readonly MigrationSet[];
  /** Schema module for drizzle's relational queries. */
  schema?: TSchema;
  /**
   * PostgreSQL server to use instead of the embedded one. Defaults to
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
  /** `"embedded"` (the test run's embedded PostgreSQL server) or `"postgres"` (a database on `DATABASE_URL`'s server). */
  kind: "embedded" | "postgres";
  /** Empties every table of the migrated schemas and restarts their sequences. */
  reset(): Promise<void>;
  /** Ends the pool (and stops a server private to this file). */
  close(): Promise<void>;
}

/**
 * Gives a test file a freshly migrated, empty database.
 *
 * - Without `DATABASE_URL`: a database of this worker slot on the test run's
 *   embedded PostgreSQL server (started by the package's global setup),
 *   copied from a migrated template on the slot's first file and emptied
 *   before every later one. Without the global setup, a server private to
 *   this test file.
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
  const outside = baseUrl !== undefined && baseUrl !== null && baseUrl !== "";
  const schemas = options.migrations.map((set) => set.schema);
  const label = options.label ?? (schemas.join("_") || "db");
  const slot = process.env["VITEST_POOL_ID"] ?? String(process.pid);
  let url: string;
  let stopServer: () => Promise<void> = async () => {};
  if (outside) {
    url = await recreateDatabase(baseUrl, workerDatabaseName(baseUrl, label, slot));
  } else {
    let serverUrl = serverOfThisRun();
    if (serverUrl === undefined) {
      const server = await startTestServer();
      serverUrl = server.url;
      stopServer = () => server.stop();
    }
    url = await workerDatabaseFromTemplate(serverUrl, options.migrations, label, slot);
  }

  const pool = createPool({ url, max: 4 });
  try {
    // A no-op on a copy of the template; applies what a database of an outside server lacks.
    await runMigrations(pool, options.migrations);
    await runMigrations(pool, options.migrations, { kind: "post-deploy" });
    // A slot's database keeps what the previous file of the slot left.
    await truncateSchemas(pool, schemas);
  } catch (error) {
    await pool.end();
    await stopServer();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const empty = schemaEmptier(pool, schemas);
  return {
    url,
    pool,
    db: createDrizzle(pool, options.schema),
    kind: outside ? "postgres" : "embedded",
    reset: empty,
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

/** The URL of the server started by the global setup, if the project registered it. */
function serverOfThisRun(): string | undefined {
  try {
    return inject(TEST_SERVER_KEY);
  } catch {
    // Not inside a vitest test file.
    return undefined;
  }
}
