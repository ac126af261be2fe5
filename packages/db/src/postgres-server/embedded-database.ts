import { rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { silentLogger, type Logger } from "../logger.js";
import type { MigrationSet } from "../migrations.js";
import { createPool } from "../pool.js";
import { convertPgliteData, type PgliteConversion } from "./convert-pglite.js";
import { startPostgresServer, type PostgresServer } from "./postgres-server.js";

/** Options of {@link startEmbeddedDatabase}. */
export interface EmbeddedDatabaseOptions {
  /** The folder of the local data (`./data`): the cluster goes to `<home>/postgres`. */
  home: string;
  /** The database the services use (default `tessera`), created when missing. */
  database?: string;
  /** Every service's migrations, to convert an earlier version's PGlite data found in `<home>/pglite`. */
  migrations: readonly MigrationSet[];
  /**
   * Whether this start may convert an earlier version's PGlite folder (default
   * true). A command that knows only its own service's migrations passes false:
   * it is then refused, with a sentence saying to run `npm start` once.
   */
  convert?: boolean;
  log?: Logger;
}

/** The embedded database of `npm start`, running. */
export interface EmbeddedDatabase {
  /** Connection string of the services' database. */
  readonly url: string;
  readonly server: PostgresServer;
  /** What was converted from an earlier version's PGlite folder at this start, if anything. */
  readonly conversion: PgliteConversion | undefined;
  /** Fast, clean shutdown of the server. */
  stop(): Promise<void>;
}

/**
 * Starts the PostgreSQL server of a local installation on `<home>/postgres`,
 * makes sure the services' database exists, and converts the data of an
 * earlier version (PGlite, in `<home>/pglite`) into it, once.
 *
 * @throws {PostgresServerError} from the start, or an error naming both
 *   folders when `<home>/pglite` is found beside a database that already
 *   holds data.
 */
export async function startEmbeddedDatabase(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const log = options.log ?? silentLogger;
  const home = path.resolve(options.home);
  const database = options.database ?? "tessera";
  const server = await startPostgresServer({ dataDir: path.join(home, "postgres"), log });
  try {
    const url = server.urlOf(database);
    const pgliteDir = path.join(home, "pglite");
    const marker = path.join(home, "pglite-conversion-started");
    const convert = (await exists(path.join(pgliteDir, "PG_VERSION"))) && (await conversionAllowed(server.url, database, marker, pgliteDir));
    if (convert && options.convert === false) {
      throw new Error(`${pgliteDir} holds data of an earlier Tessera that has not been converted yet: run \`npm start\` once in ${path.dirname(home)}, which converts it, or set DATABASE_URL to a PostgreSQL server.`);
    }
    // Written before the database is made, removed once the conversion has finished: one cut short runs again.
    if (convert) await writeFile(marker, `${new Date().toISOString()}\n`);
    await createDatabaseIfMissing(server.url, database);
    const conversion = convert ? await convertInto(url, pgliteDir, marker, options.migrations, log) : undefined;
    return { url, server, conversion, stop: () => server.stop() };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** A conversion goes into a database made for it only, never over one that holds data of its own. */
async function conversionAllowed(serverUrl: string, database: string, marker: string, pgliteDir: string): Promise<boolean> {
  if (!(await databaseExists(serverUrl, database)) || (await exists(marker))) return true;
  throw new Error(
    `${pgliteDir} holds data of an earlier Tessera (PGlite), but the database "${database}" of the PostgreSQL server beside it ` +
      `already has its own: move one of the two folders away and start again.`,
  );
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

async function convertInto(url: string, pgliteDir: string, marker: string, migrations: readonly MigrationSet[], log: Logger): Promise<PgliteConversion> {
  const target = createPool({ url, max: 2, log });
  try {
    log.info(`database: converting the data of an earlier version in ${pgliteDir} to PostgreSQL`);
    const conversion = await convertPgliteData({ pgliteDir, target, migrations, log });
    await rm(marker);
    return conversion;
  } finally {
    await target.end();
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
