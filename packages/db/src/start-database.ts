import path from "node:path";
import pg from "pg";
import { unusableTlsFile } from "./connection-tls.js";
import { configurationMistake, databaseAddress, DatabaseStartError } from "./database-start-error.js";
import { createDrizzle, type Database } from "./drizzle.js";
import { describeDatabaseError, isDatabaseUnavailable } from "./faults.js";
import { silentLogger, type Logger } from "./logger.js";
import { runMigrations, type MigrationSet } from "./migrations.js";
import { createPool } from "./pool.js";
import { startEmbeddedDatabase } from "./postgres-server/embedded-database.js";
import { createReadReplicaPool, DEFAULT_READ_TIMEOUT_MS, ReadRouter, replicaName } from "./read-replicas.js";
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
  /** Migrations to apply before returning (the regular kind only: post-deploy migrations are never applied at start). */
  migrations?: readonly MigrationSet[];
  /** `DATABASE_MIGRATION_LOCK_TIMEOUT_MS`: see `lockTimeoutMs` of `runMigrations`. */
  migrationLockTimeoutMs?: number;
  /** `DATABASE_MIGRATION_LOCK_ATTEMPTS`: see `lockAttempts` of `runMigrations`. */
  migrationLockAttempts?: number;
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
  /**
   * `DATABASE_READ_URL`: replicas for the reads that tolerate a little lag
   * (see {@link ReadRouter}). None: the primary serves every read.
   */
  readUrls?: readonly string[];
  /** `DATABASE_READ_MAX_LAG_MS`: a replica further behind is skipped (default 5,000). */
  readMaxLagMs?: number;
  /**
   * `DATABASE_READ_TIMEOUT_MS`: the replicas' pools' bound on a connection and
   * on a statement (default 2,000; see `createReadReplicaPool`). A read that
   * meets it skips that replica and is asked of the primary.
   */
  readTimeoutMs?: number;
}

/** The longest wait between two attempts to reach the database at start-up. */
export const START_RETRY_MAX_MS = 2000;

/** A database ready for a service. */
export interface StartedDatabase<TSchema extends Record<string, unknown>> {
  /** Connection string the pool uses. */
  url: string;
  pool: pg.Pool;
  db: Database<TSchema>;
  /** Where reads that tolerate lag go: a replica close enough to the primary, else the primary. */
  reads: ReadRouter;
  /** The database for one read that tolerates lag (`reads.pool()`'s). */
  readDb(): Database<TSchema>;
  /** Ends the pools, then stops the embedded server if this process started it. */
  close(): Promise<void>;
}

/**
 * Connects a service or command to its database at start-up: to `url` when
 * one is given. Otherwise to the embedded PostgreSQL server of `dataDir`
 * (`npm start` runs it): the one running there already, or else one started
 * here for as long as this process needs it. Applies `migrations` when given.
 *
 * A database that cannot be used as configured (login refused, database
 * missing, a privilege lacking, TLS refused either way or a certificate that
 * does not verify, a TLS file of the URL missing) fails with a
 * `DatabaseStartError` that says so in one sentence, even with
 * `waitWhileUnavailable`; one that cannot be reached fails with the driver's
 * error, or is waited for with `waitWhileUnavailable`. Each read replica is
 * tried once too: one that cannot be used as configured fails the start the
 * same way, one that cannot be reached yet is left to the read router.
 */
export async function startDatabase<TSchema extends Record<string, unknown> = Record<string, never>>(
  options: StartDatabaseOptions<TSchema> = {},
): Promise<StartedDatabase<TSchema>> {
  const log = options.log ?? silentLogger;
  const given = options.url !== undefined && options.url !== "" ? options.url : undefined;
  const unusable = [
    ...(given === undefined ? [] : [unusableTlsFile(given, "DATABASE_URL")]),
    ...(options.readUrls ?? []).map((readUrl) => unusableTlsFile(readUrl, "DATABASE_READ_URL")),
  ].find((problem) => problem !== null);
  if (unusable !== undefined) throw new DatabaseStartError(`${unusable}.`);
  const local = given === undefined ? await openLocalServer(path.resolve(options.dataDir ?? DEFAULT_DATA_DIR), log) : undefined;
  const url = given ?? (local as NonNullable<typeof local>).url;
  const pool = createPool({
    url,
    max: options.poolMax ?? 10,
    log,
    ...(options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs }),
  });
  const replicas = (options.readUrls ?? []).map((readUrl) => ({
    url: readUrl,
    pool: createReadReplicaPool({
      url: readUrl,
      max: options.poolMax ?? 10,
      log,
      ...(options.readTimeoutMs === undefined ? {} : { timeoutMs: options.readTimeoutMs }),
    }),
  }));
  const reads = new ReadRouter({ primary: pool, replicas, log, ...(options.readMaxLagMs === undefined ? {} : { maxLagMs: options.readMaxLagMs }) });
  const close = async (): Promise<void> => {
    reads.stop();
    try {
      await Promise.all([pool.end(), ...replicas.map((replica) => replica.pool.end())]);
    } finally {
      await local?.stop();
    }
  };
  const where = databaseAddress(url).server;
  let waitingSince: number | null = null;
  let attempts = 0;
  for (;;) {
    try {
      // Without migrations to apply (a `migrate` command applies them itself), one statement still finds out at once
      // whether the database can be used as configured, so that a refusal is the same sentence as a service's start.
      if (options.migrations === undefined || options.migrations.length === 0) {
        await pool.query("select 1");
      } else {
        const migrationOptions = {
          log,
          ...(options.migrationLockTimeoutMs === undefined ? {} : { lockTimeoutMs: options.migrationLockTimeoutMs }),
          ...(options.migrationLockAttempts === undefined ? {} : { lockAttempts: options.migrationLockAttempts }),
        };
        for (const report of await runMigrations(pool, options.migrations, migrationOptions)) {
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
      // A refusal over TLS counts as unavailable once running (503); at start-up it is the configuration's, and stops it.
      const mistake = configurationMistake(error, url);
      if (mistake === null && options.waitWhileUnavailable === true && isDatabaseUnavailable(error)) {
        attempts += 1;
        if (waitingSince === null) {
          waitingSince = Date.now();
          log.warn(`database unavailable at ${where} (${describeDatabaseError(error)}), retrying until it answers`);
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(START_RETRY_MAX_MS, 250 * 2 ** Math.min(attempts - 1, 8))));
        continue;
      }
      await close();
      throw mistake ?? error;
    }
  }
  const replicaMistake = await firstReplicaMistake(options.readUrls ?? [], options.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS, log);
  if (replicaMistake !== null) {
    await close();
    throw replicaMistake;
  }
  if (waitingSince !== null) {
    log.info(`database: reached ${where} after ${((Date.now() - waitingSince) / 1000).toFixed(1)} s (${attempts} failed attempt(s))`);
  }
  const db = createDrizzle(pool, options.schema);
  const readDbs = new Map<pg.Pool, Database<TSchema>>([[pool, db], ...replicas.map((replica): [pg.Pool, Database<TSchema>] => [replica.pool, createDrizzle(replica.pool, options.schema)])]);
  return { url, pool, db, reads, readDb: () => readDbs.get(reads.pool()) ?? db, close };
}

/**
 * Connects once to each read replica: the first configuration mistake met
 * (see `configurationMistake`, naming `DATABASE_READ_URL`), or `null`. A
 * replica that cannot be reached is logged and left to the read router,
 * which sends reads to it once it answers.
 */
async function firstReplicaMistake(readUrls: readonly string[], timeoutMs: number, log: Logger): Promise<DatabaseStartError | null> {
  const mistakes = await Promise.all(
    readUrls.map(async (readUrl) => {
      const client = new pg.Client({ connectionString: readUrl, connectionTimeoutMillis: timeoutMs });
      client.on("error", () => undefined);
      try {
        await client.connect();
        return null;
      } catch (error) {
        const mistake = configurationMistake(error, readUrl, "DATABASE_READ_URL");
        if (mistake === null) log.warn(`database: read replica ${replicaName(readUrl)} cannot be reached yet (${describeDatabaseError(error)}); reads go to the primary until it answers`);
        return mistake;
      } finally {
        await client.end().catch(() => undefined);
      }
    }),
  );
  return mistakes.find((mistake) => mistake !== null) ?? null;
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
