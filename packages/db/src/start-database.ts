import type pg from "pg";
import { configurationMistake, databaseAddress } from "./database-start-error.js";
import { createDrizzle, type Database } from "./drizzle.js";
import { describeDatabaseError, isDatabaseUnavailable } from "./faults.js";
import { openEmbeddedDatabase } from "./embedded/open-embedded-database.js";
import { silentLogger, type Logger } from "./logger.js";
import { runMigrations, type MigrationSet } from "./migrations.js";
import { servesOneSession } from "./one-session-server.js";
import { createPool } from "./pool.js";

/** Default data directory of the embedded database, relative to the working directory. */
export const DEFAULT_DATA_DIR = "./data/pglite";

/** Pool size on the embedded server, where connections take turns on one session anyway. */
export const EMBEDDED_POOL_MAX = 4;

/** Options of {@link startDatabase}. */
export interface StartDatabaseOptions<TSchema extends Record<string, unknown>> {
  /** `DATABASE_URL`. Absent or empty: use the embedded database. */
  url?: string | undefined;
  /** Data directory of the embedded database (default `./data/pglite`; `memory://` for none). */
  dataDir?: string | undefined;
  /** Where start-up notes go (never `console`). */
  log?: Logger;
  /** Pool size (default 10 on PostgreSQL, {@link EMBEDDED_POOL_MAX} on the embedded server). */
  poolMax?: number;
  /** Migrations to apply before returning. */
  migrations?: readonly MigrationSet[];
  /** Schema module for drizzle's relational queries. */
  schema?: TSchema;
  /** The pool's bound on one statement (see `createPool`; default 30 000 ms, `null` for none). */
  statementTimeoutMs?: number | null;
  /**
   * While the server cannot be reached (refused, reset, timed out, starting
   * up), wait and try again, with a delay doubling from 250 ms to
   * {@link START_RETRY_MAX_MS}, instead of failing: what a service does, so
   * that starting it before its database is not fatal. It logs one line when
   * it starts waiting and one when the database answers. Default `false`.
   */
  waitWhileUnavailable?: boolean;
}

/** The longest wait between two attempts to reach the database at start-up. */
export const START_RETRY_MAX_MS = 2000;

/** A database ready for a service. */
export interface StartedDatabase<TSchema extends Record<string, unknown>> {
  /** Connection string the pool uses. */
  url: string;
  pool: pg.Pool;
  db: Database<TSchema>;
  /**
   * Whether this is the embedded database: started here, shared with another
   * process, or reached through `url`. It serves every connection from one
   * session, so named prepared statements and other session state must not be used.
   */
  embedded: boolean;
  /** Ends the pool, then releases the embedded server (stopping it if this was its last user here). */
  close(): Promise<void>;
}

/**
 * Connects a service to its database at start-up: to `url` when one is given,
 * otherwise to the embedded PGlite server of `dataDir` (started here, shared
 * with other services of this process, or found running in another process).
 * Applies `migrations` when given.
 *
 * A database that cannot be used as configured (login refused, database
 * missing, a privilege lacking) fails with a `DatabaseStartError` that says so
 * in one sentence; one that cannot be reached fails with the driver's error,
 * or is waited for with `waitWhileUnavailable`.
 */
export async function startDatabase<TSchema extends Record<string, unknown> = Record<string, never>>(
  options: StartDatabaseOptions<TSchema> = {},
): Promise<StartedDatabase<TSchema>> {
  const log = options.log ?? silentLogger;
  const given = options.url !== undefined && options.url !== "" ? options.url : undefined;
  const embedded =
    given === undefined ? await openEmbeddedDatabase({ dataDir: options.dataDir ?? DEFAULT_DATA_DIR, log }) : undefined;
  const url = given ?? (embedded as NonNullable<typeof embedded>).url;
  if (embedded !== undefined) {
    log.warn(
      `database: DATABASE_URL is not set, so the embedded PGlite database in ${embedded.dataDir} is used ` +
        `(${embedded.servedHere ? "served by this process" : "served by another process"} on ${embedded.url}). ` +
        `It is for one machine only: one session serves every connection in turn. ` +
        `Set DATABASE_URL to a PostgreSQL server to run more than one instance.`,
    );
  }
  const pool = createPool({
    url,
    max: options.poolMax ?? (embedded ? EMBEDDED_POOL_MAX : 10),
    log,
    ...(options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs }),
  });
  const close = async (): Promise<void> => {
    try {
      await pool.end();
    } finally {
      await embedded?.release();
    }
  };
  let oneSession = embedded !== undefined;
  const where = databaseAddress(url).server;
  let waitingSince: number | null = null;
  let attempts = 0;
  for (;;) {
    try {
      if (!oneSession) oneSession = await servesOneSession(pool);
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
      break;
    } catch (error) {
      if (options.waitWhileUnavailable === true && isDatabaseUnavailable(error)) {
        attempts += 1;
        if (waitingSince === null) {
          waitingSince = Date.now();
          log.warn(`database unavailable at ${where} (${describeDatabaseError(error)}), retrying until it answers`);
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(START_RETRY_MAX_MS, 250 * 2 ** Math.min(attempts - 1, 8))));
        continue;
      }
      await close();
      throw configurationMistake(error, url) ?? error;
    }
  }
  if (waitingSince !== null) {
    log.info(`database: reached ${where} after ${((Date.now() - waitingSince) / 1000).toFixed(1)} s (${attempts} failed attempt(s))`);
  }
  return { url, pool, db: createDrizzle(pool, options.schema), embedded: oneSession, close };
}
