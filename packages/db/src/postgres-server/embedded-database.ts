import path from "node:path";
import pg from "pg";
import { silentLogger, type Logger } from "../logger.js";
import type { MigrationSet } from "../migrations.js";
import { convertEarlierData, earlierDataToConvert, markConversionStarted, notConvertedYet, type EarlierDataConversion } from "./convert-earlier-data.js";
import { startPostgresServer, type PostgresServer, type PostgresServerOptions } from "./postgres-server.js";

/** Options of {@link startEmbeddedDatabase}; `binaries` and `binaryCache` as for `startPostgresServer`. */
export interface EmbeddedDatabaseOptions extends Pick<PostgresServerOptions, "binaries" | "binaryCache"> {
  /** The folder of the local data (`./data`): the cluster goes to `<home>/postgres`. */
  home: string;
  /** The database the services use (default `tessera`), created when missing. */
  database?: string;
  /** Every service's migrations, to convert the data an earlier version left in `<home>`. */
  migrations: readonly MigrationSet[];
  /**
   * Whether this start may convert an earlier version's data (default true).
   * A command that knows only its own service's migrations passes false: it
   * is then refused, with a sentence saying to run `npm start` once.
   */
  convert?: boolean;
  /** See `stopWhenCallerEnds` of `startPostgresServer`: what `npm start` passes, which stops the server itself, last. */
  stopWhenCallerEnds?: boolean;
  log?: Logger;
}

/**
 * The server settings of a local installation, lighter than PostgreSQL's
 * defaults for a machine that runs the services beside it (fewer processes,
 * less shared memory), and as fast on its small data: reads without I/O
 * worker processes (`io_method=sync`), 16 MB of shared buffers, no logical
 * replication launcher (nothing replicates from it), no JIT compilation (its
 * queries are small; a JIT-compiled one would load LLVM into a server process
 * for good), and 50 connections at most instead of 100 (the three services'
 * pools of 10 and the commands fit, and the shared memory for each possible
 * connection is smaller). Autovacuum, fsync and full-page writes stay.
 */
export const EMBEDDED_SETTINGS: Readonly<Record<string, string>> = {
  io_method: "sync",
  shared_buffers: "16MB",
  max_logical_replication_workers: "0",
  jit: "off",
  max_connections: "50",
};

/** The embedded database of `npm start`, running. */
export interface EmbeddedDatabase {
  /** Connection string of the services' database. */
  readonly url: string;
  readonly server: PostgresServer;
  /** What was converted from an earlier version's data at this start, if anything. */
  readonly conversion: EarlierDataConversion | undefined;
  /** Fast, clean shutdown of the server. */
  stop(): Promise<void>;
}

/**
 * Starts the PostgreSQL server of a local installation on `<home>/postgres`,
 * makes sure the services' database exists, and converts the data that an
 * earlier version kept in `<home>` (its own database engine's folder) into
 * it, once.
 *
 * @throws {PostgresServerError} from the start, or an error naming both
 *   folders when an earlier version's data is found beside a database that
 *   already holds data.
 */
export async function startEmbeddedDatabase(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const log = options.log ?? silentLogger;
  const home = path.resolve(options.home);
  const database = options.database ?? "tessera";
  const server = await startPostgresServer({
    dataDir: path.join(home, "postgres"),
    settings: EMBEDDED_SETTINGS,
    stopWhenCallerEnds: options.stopWhenCallerEnds ?? false,
    log,
    ...(options.binaries === undefined ? {} : { binaries: options.binaries }),
    ...(options.binaryCache === undefined ? {} : { binaryCache: options.binaryCache }),
  });
  try {
    const url = server.urlOf(database);
    const convert = await earlierDataToConvert(home, database, () => databaseExists(server.url, database));
    if (convert && options.convert === false) throw notConvertedYet(home);
    // Marked before the database is made, unmarked once the conversion has finished: one cut short runs again.
    if (convert) await markConversionStarted(home);
    await createDatabaseIfMissing(server.url, database);
    const conversion = convert ? await convertEarlierData({ home, url, migrations: options.migrations, log }) : undefined;
    return { url, server, conversion, stop: () => server.stop() };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

async function databaseExists(serverUrl: string, database: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return Boolean((await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database])).rowCount);
  } finally {
    await client.end();
  }
}

async function createDatabaseIfMissing(serverUrl: string, database: string): Promise<void> {
  if (await databaseExists(serverUrl, database)) return;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
}
