// The converter of the data that versions before the embedded PostgreSQL server kept in
// ./data/pglite (PGlite: PostgreSQL compiled to WebAssembly), the only code that still
// knows that engine: npm start's first start on such a ./data moves its rows into the
// PostgreSQL server, once. What only a conversion needs (PGlite above all) is loaded when one
// runs: every start looks for earlier data, and the processes that do must stay small.
import { readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import type pg from "pg";
import { silentLogger, type Logger } from "../logger.js";
import type { MigrationSet } from "../migrations.js";

/** Options of {@link convertPgliteData}. */
export interface ConvertPgliteOptions {
  /** The data directory of the PGlite database that earlier versions used (`./data/pglite`). */
  pgliteDir: string;
  /** An empty database on the new server, as the superuser (foreign keys are not checked while rows are copied). */
  target: pg.Pool;
  /** Every service's migrations: the target gets the same ones applied as the PGlite database. */
  migrations: readonly MigrationSet[];
  log?: Logger;
}

/** What {@link convertPgliteData} did. */
export interface EarlierDataConversion {
  /** Every table copied, as `schema.table`, with its number of rows (the same on both sides). */
  tables: { name: string; rows: number }[];
  /** Where the PGlite data directory was moved to, beside its old place. */
  keptAt: string;
}

/** Rows read and written per statement. */
const BATCH_ROWS = 2000;

/**
 * Moves the data of an earlier version's PGlite database into an empty
 * database of a PostgreSQL server, once: applies on the target exactly the
 * migrations the PGlite database had (later ones are the services' to apply
 * at their start, data changes included), copies every row of every table
 * outside PostgreSQL's own schemas, sets each sequence where it stood, checks
 * the row count of every table on both sides, and renames the PGlite folder
 * to `<pgliteDir>-converted-<date>` so that nothing reads it again.
 *
 * @throws when PGlite is still open in another process, or a count differs
 *   (the target is then left as it is and the PGlite folder where it was).
 */
export async function convertPgliteData(options: ConvertPgliteOptions): Promise<EarlierDataConversion> {
  const log = options.log ?? silentLogger;
  await refuseWhileOpen(options.pgliteDir);
  const [{ PGlite }, { runMigrations }] = await Promise.all([import("@electric-sql/pglite"), import("../migrations.js")]);
  const source = await PGlite.create({ dataDir: options.pgliteDir });
  let tables: { name: string; rows: number }[];
  try {
    const only = await appliedMigrations(source, options.migrations);
    await runMigrations(options.target, options.migrations, { only });
    tables = await copyTables(source, options.target);
    await copySequences(source, options.target);
  } finally {
    await source.close();
  }
  const keptAt = `${options.pgliteDir}-converted-${new Date().toISOString().slice(0, 10)}`;
  await rename(options.pgliteDir, keptAt);
  log.info(
    `database: converted the PGlite database of ${options.pgliteDir} (${tables.length} tables, ` +
      `${tables.reduce((sum, table) => sum + table.rows, 0)} rows, the same count in every table); it is kept at ${keptAt}`,
  );
  return { tables, keptAt };
}

/** An earlier version holds `<dataDir>.lock` ({"pid": …}) while it serves the directory. */
async function refuseWhileOpen(pgliteDir: string): Promise<void> {
  let pid: number | undefined;
  try {
    pid = (JSON.parse(await readFile(`${pgliteDir}.lock`, "utf8")) as { pid?: number }).pid;
  } catch {
    return;
  }
  if (pid === undefined) return;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return;
  }
  throw new Error(`${pgliteDir} is still open in process ${pid} (an earlier Tessera): stop it, then start again to convert its data.`);
}

async function appliedMigrations(source: PGlite, sets: readonly MigrationSet[]): Promise<Map<string, Set<number>>> {
  const { bookkeepingTable, BOOKKEEPING_SCHEMA } = await import("../migrations.js");
  const only = new Map<string, Set<number>>();
  for (const set of sets) {
    const table = `${quote(BOOKKEEPING_SCHEMA)}.${quote(bookkeepingTable(set))}`;
    const exists = await source.query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [table]);
    const rows = exists.rows[0]?.found ? (await source.query<{ created_at: string }>(`SELECT created_at::text FROM ${table}`)).rows : [];
    only.set(set.schema, new Set(rows.map((row) => Number(row.created_at))));
  }
  return only;
}

interface TableColumns {
  schema: string;
  table: string;
  /** Columns that hold data (generated ones are computed again on the target). */
  columns: string[];
}

const USER_TABLES = `
  SELECT c.table_schema AS schema, c.table_name AS table, array_agg(c.column_name::text ORDER BY c.ordinal_position) AS columns
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
   WHERE t.table_type = 'BASE TABLE' AND c.is_generated = 'NEVER'
     AND c.table_schema NOT IN ('pg_catalog', 'information_schema') AND c.table_schema NOT LIKE 'pg\\_%'
   GROUP BY 1, 2 ORDER BY 1, 2`;

async function copyTables(source: PGlite, target: pg.Pool): Promise<{ name: string; rows: number }[]> {
  const sourceTables = (await source.query<TableColumns>(USER_TABLES)).rows;
  const targetTables = new Map((await target.query<TableColumns>(USER_TABLES)).rows.map((t) => [`${t.schema}.${t.table}`, t]));
  const missing = sourceTables.filter((t) => !targetTables.has(`${t.schema}.${t.table}`)).map((t) => `${t.schema}.${t.table}`);
  if (missing.length > 0) throw new Error(`the migrations do not create ${missing.join(", ")}, which the PGlite database has`);

  const client = await target.connect();
  const copied: { name: string; rows: number }[] = [];
  try {
    await client.query("BEGIN");
    // Rows arrive table by table, in no order that foreign keys would accept: their triggers wait.
    await client.query("SET LOCAL session_replication_role = replica");
    // The migrations' own rows (bookkeeping, seeded settings) are replaced by the copy.
    await client.query(`TRUNCATE ${[...targetTables.keys()].map((name) => name.split(".").map(quote).join(".")).join(", ")}`);
    for (const table of sourceTables) {
      const name = `${quote(table.schema)}.${quote(table.table)}`;
      const targetColumns = new Set(targetTables.get(`${table.schema}.${table.table}`)?.columns);
      const columns = table.columns.filter((column) => targetColumns.has(column)).map(quote).join(", ");
      for (let offset = 0; ; offset += BATCH_ROWS) {
        const batch = await source.query<{ rows: string | null }>(
          `SELECT json_agg(t)::text AS rows FROM (SELECT ${columns} FROM ${name} ORDER BY ctid LIMIT ${BATCH_ROWS} OFFSET ${offset}) t`,
        );
        const json = batch.rows[0]?.rows;
        if (!json) break;
        await client.query(
          `INSERT INTO ${name} (${columns}) OVERRIDING SYSTEM VALUE SELECT ${columns} FROM json_populate_recordset(null::${name}, $1::json)`,
          [json],
        );
      }
      const [before] = (await source.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${name}`)).rows;
      const [after] = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${name}`)).rows;
      if (before?.n !== after?.n) throw new Error(`${table.schema}.${table.table}: ${before?.n} rows in PGlite but ${after?.n} copied`);
      copied.push({ name: `${table.schema}.${table.table}`, rows: after?.n ?? 0 });
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
  return copied;
}

async function copySequences(source: PGlite, target: pg.Pool): Promise<void> {
  const sequences = await source.query<{ name: string; last_value: string | null; is_called: boolean }>(
    `SELECT format('%I.%I', schemaname, sequencename) AS name, last_value::text, last_value IS NOT NULL AS is_called
       FROM pg_sequences WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
  );
  for (const sequence of sequences.rows) {
    if (sequence.last_value === null) continue; // Never used: the target's fresh sequence is the same.
    await target.query("SELECT setval($1::regclass, $2::bigint, true)", [sequence.name, sequence.last_value]);
  }
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The earlier version's folder in a local installation's `home` (`./data`), and the mark of a conversion under way. */
function earlierData(home: string): { dir: string; marker: string } {
  return { dir: path.join(home, "pglite"), marker: path.join(home, "pglite-conversion-started") };
}

/**
 * Whether `home` holds an earlier version's data to convert into `database`:
 * its folder is there, and the database is missing or a conversion into it
 * was cut short.
 *
 * @throws when the folder is found beside a database that has data of its own.
 */
export async function earlierDataToConvert(home: string, database: string, databaseExists: () => Promise<boolean>): Promise<boolean> {
  const { dir, marker } = earlierData(home);
  if (!(await exists(path.join(dir, "PG_VERSION")))) return false;
  if (!(await databaseExists()) || (await exists(marker))) return true;
  throw new Error(
    `${dir} holds data of an earlier Tessera (PGlite), but the database "${database}" of the PostgreSQL server beside it ` +
      `already has its own: move one of the two folders away and start again.`,
  );
}

/** What a command that cannot convert says (it knows only its own service's migrations). */
export function notConvertedYet(home: string): Error {
  return new Error(
    `${earlierData(home).dir} holds data of an earlier Tessera that has not been converted yet: run \`npm start\` once in ${path.dirname(home)}, which converts it, or set DATABASE_URL to a PostgreSQL server.`,
  );
}

/** Written before the target database is made: a conversion cut short runs again at the next start. */
export async function markConversionStarted(home: string): Promise<void> {
  await writeFile(earlierData(home).marker, `${new Date().toISOString()}\n`);
}

/** Converts the earlier data of `home` into the empty database at `url` (as the superuser), then removes the mark. */
export async function convertEarlierData(options: { home: string; url: string; migrations: readonly MigrationSet[]; log: Logger }): Promise<EarlierDataConversion> {
  const { dir, marker } = earlierData(options.home);
  const { createPool } = await import("../pool.js");
  const target = createPool({ url: options.url, max: 2, log: options.log });
  try {
    options.log.info(`database: converting the data of an earlier version in ${dir} to PostgreSQL`);
    const conversion = await convertPgliteData({ pgliteDir: dir, target, migrations: options.migrations, log: options.log });
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
