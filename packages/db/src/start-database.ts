import path from "node:path";
import pg from "pg";
import { createDrizzle, type Database } from "./drizzle.js";
import { silentLogger, type Logger } from "./logger.js";
import { runMigrations, type MigrationSet } from "./migrations.js";
import { createPool } from "./pool.js";
import { startEmbeddedDatabase } from "./postgres-server/embedded-database.js";
import { PostgresServerError } from "./postgres-server/postgres-server-error.js";
import { connectionUrl, runningServer } from "./postgres-server/running-server.js";

/** Default folder of the local data (the embedded PostgreSQL cluster is in `<folder>/postgres`), relative to the working directory. */
export const DEFAULT_DATA_DIR = "./data";

/** The database of the services on the embedded server. */
const EMBEDDED_DATABASE = "tessera";

/** Options of {@link startDatabase}. */
export interface StartDatabaseOptions<TSchema extends Record<string, unknown>> {
  /** `DATABASE_URL`. Absent or empty: use the embedded PostgreSQL server of `dataDir`. */
  url?: string | undefined;
  /** Folder of the local data (default `./data`), whose embedded PostgreSQL server is used when there is no `url`. */
  dataDir?: string | undefined;
  /** Where start-up notes go (never `console`). */
  log?: Logger;
  /** Pool size (default 10). */
  poolMax?: number;
  /** Migrations to apply before returning. */
  migrations?: readonly MigrationSet[];
  /** Schema module for drizzle's relational queries. */
  schema?: TSchema;
}

/** A database ready for a service. */
export interface StartedDatabase<TSchema extends Record<string, unknown>> {
  /** Connection string the pool uses. */
  url: string;
  pool: pg.Pool;
  db: Database<TSchema>;
  /** Ends the pool, then stops the embedded server if this process started it. */
  close(): Promise<void>;
}

/**
 * Connects a service or command to its database at start-up: to `url` when
 * one is given. Otherwise to the embedded PostgreSQL server of `dataDir`
 * (`npm start` runs it): the one running there already, or else one started
 * here for as long as this process needs it. Applies `migrations` when given.
 */
export async function startDatabase<TSchema extends Record<string, unknown> = Record<string, never>>(
  options: StartDatabaseOptions<TSchema> = {},
): Promise<StartedDatabase<TSchema>> {
  const log = options.log ?? silentLogger;
  const given = options.url !== undefined && options.url !== "" ? options.url : undefined;
  const local = given === undefined ? await openLocalServer(path.resolve(options.dataDir ?? DEFAULT_DATA_DIR), log) : undefined;
  const url = given ?? (local as NonNullable<typeof local>).url;
  const pool = createPool({ url, max: options.poolMax ?? 10, log });
  const close = async (): Promise<void> => {
    try {
      await pool.end();
    } finally {
      await local?.stop();
    }
  };
  try {
    if (options.migrations !== undefined) {
      for (const report of await runMigrations(pool, options.migrations)) {
        if (report.applied > 0) log.info(`database: applied ${report.applied} migration(s) to schema ${report.schema}`);
        for (const tag of report.changedSinceApplied) {
          log.warn(
            `database: migration ${tag} of schema ${report.schema} has changed since it was applied; ` +
              `this database does not have the change (write a new migration instead of editing an applied one)`,
          );
        }
      }
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { url, pool, db: createDrizzle(pool, options.schema), close };
}

/**
 * The embedded server of `home`: the one running there (its address is in its
 * `postmaster.pid`), or one started for this process and stopped by `stop`.
 */
async function openLocalServer(home: string, log: Logger): Promise<{ url: string; stop(): Promise<void> }> {
  const dataDir = path.join(home, "postgres");
  for (let attempt = 0; ; attempt++) {
    const running = await runningServer(dataDir);
    if (running !== undefined) {
      const url = connectionUrl(running, EMBEDDED_DATABASE);
      await checkReachable(url, home);
      log.info(`database: DATABASE_URL is not set, so the embedded PostgreSQL server running on ${dataDir} is used`);
      return { url, stop: async () => undefined };
    }
    try {
      const started = await startEmbeddedDatabase({ home, migrations: [], convert: false, log });
      log.info(`database: DATABASE_URL is not set, so the embedded PostgreSQL server on ${dataDir} was started for this process`);
      return { url: started.url, stop: () => started.stop() };
    } catch (error) {
      // Another process started it meanwhile: use that one.
      if (error instanceof PostgresServerError && error.problem === "already-running" && attempt < 20) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      throw error;
    }
  }
}

/** The running server's database must exist (npm start creates it before any service starts). */
async function checkReachable(url: string, home: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`The embedded PostgreSQL server of ${home} runs but cannot be used (${(error as Error).message}): stop it and start again, or set DATABASE_URL to a PostgreSQL server.`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
