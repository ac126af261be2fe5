import type pg from "pg";
import { createDrizzle, type Database } from "./drizzle.js";
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
}

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
  const pool = createPool({ url, max: options.poolMax ?? (embedded ? EMBEDDED_POOL_MAX : 10), log });
  const close = async (): Promise<void> => {
    try {
      await pool.end();
    } finally {
      await embedded?.release();
    }
  };
  let oneSession = embedded !== undefined;
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
  } catch (error) {
    await close();
    throw error;
  }
  return { url, pool, db: createDrizzle(pool, options.schema), embedded: oneSession, close };
}
