import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readMigrationFiles, type MigrationMeta } from "drizzle-orm/migrator";
import type pg from "pg";
import { withStatementTimeout } from "./statement-timeout.js";

/**
 * The migrations of one service: its PostgreSQL schema and the folder that
 * drizzle-kit generates (`<folder>/meta/_journal.json` and numbered `.sql`
 * files).
 */
export interface MigrationSet {
  /** The service's PostgreSQL schema, e.g. `signon`. */
  schema: string;
  /** Absolute path of the drizzle-kit migrations folder. */
  folder: string;
  /**
   * Bookkeeping table, in schema `drizzle` (drizzle's default), default
   * `<schema>_migrations`. Same columns as drizzle's own migrator, so
   * `drizzle-kit migrate` with `migrations: { schema: "drizzle", table }` agrees.
   */
  table?: string;
}

/** What {@link runMigrations} did for one set. */
export interface MigrationReport {
  schema: string;
  /** Migrations applied by this call (0 when the database was up to date). */
  applied: number;
  /**
   * Tags of migrations applied earlier whose SQL has changed since: the
   * database does not have the change. (Edit a new migration instead.)
   */
  changedSinceApplied: string[];
}

/** Options of {@link runMigrations}. */
export interface RunMigrationsOptions {
  /**
   * Per schema, the journal timestamps (`when`) of the only migrations to
   * apply; the others of that set are left for later. Used to rebuild a
   * database at the migration level of another one.
   */
  only?: ReadonlyMap<string, ReadonlySet<number>>;
}

/** Schema that holds every service's bookkeeping table. */
export const BOOKKEEPING_SCHEMA = "drizzle";

/** All migrators take this advisory lock, so concurrent start-ups take turns. */
const LOCK_NAME = "tessera.migrations";

/** The bookkeeping table of a migration set. */
export function bookkeepingTable(set: MigrationSet): string {
  return set.table ?? `${set.schema}_migrations`;
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Applies the pending drizzle-kit migrations of each set, in journal order.
 * A migration is pending when its journal timestamp is not recorded, so one
 * merged in from another branch with an older timestamp than the last applied
 * one is still applied (drizzle's own migrator would skip it).
 *
 * Each set migrates in one transaction that first takes a transaction-level
 * advisory lock, then reads what is applied: two instances starting at once
 * against one PostgreSQL take turns, and the second finds nothing left to do.
 * (On the embedded server a transaction already has the only session.) A
 * failing migration rolls its whole set back.
 *
 * Its statements have no time bound (the pool's statement timeout does not
 * apply): a migration may rewrite a large table, and waiting for the lock
 * lasts as long as another instance's migrations.
 */
export function runMigrations(
  pool: pg.Pool,
  sets: readonly MigrationSet[],
  options: RunMigrationsOptions = {},
): Promise<MigrationReport[]> {
  return withStatementTimeout(null, () => migrateSets(pool, sets, options));
}

async function migrateSets(pool: pg.Pool, sets: readonly MigrationSet[], options: RunMigrationsOptions): Promise<MigrationReport[]> {
  const reports: MigrationReport[] = [];
  for (const set of sets) {
    const only = options.only?.get(set.schema);
    const tags = journalTags(set.folder);
    const chosen = readMigrationFiles({ migrationsFolder: set.folder })
      .map((migration, index) => ({ migration, tag: tags[index] ?? String(migration.folderMillis) }))
      .filter(({ migration }) => only === undefined || only.has(migration.folderMillis));
    const report = await migrateSet(
      pool,
      set,
      chosen.map(({ migration }) => migration),
      chosen.map(({ tag }) => tag),
    );
    reports.push({ schema: set.schema, ...report });
  }
  return reports;
}

/** The tags (file names without `.sql`) of the journal's migrations, in journal order. */
function journalTags(folder: string): string[] {
  const journal = JSON.parse(readFileSync(join(folder, "meta", "_journal.json"), "utf8")) as {
    entries: { tag: string }[];
  };
  return journal.entries.map((entry) => entry.tag);
}

async function migrateSet(
  pool: pg.Pool,
  set: MigrationSet,
  migrations: MigrationMeta[],
  tags: string[],
): Promise<Omit<MigrationReport, "schema">> {
  const table = `${quoteIdentifier(BOOKKEEPING_SCHEMA)}.${quoteIdentifier(bookkeepingTable(set))}`;
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [LOCK_NAME]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(BOOKKEEPING_SCHEMA)}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${table} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
    );
    const recorded = await client.query<{ hash: string; created_at: string | null }>(
      `SELECT hash, created_at FROM ${table}`,
    );
    const hashByTimestamp = new Map(recorded.rows.map((row) => [Number(row.created_at), row.hash]));
    let applied = 0;
    const changedSinceApplied: string[] = [];
    for (const [index, migration] of migrations.entries()) {
      const recordedHash = hashByTimestamp.get(migration.folderMillis);
      if (recordedHash !== undefined) {
        if (recordedHash !== migration.hash) changedSinceApplied.push(tags[index] ?? String(migration.folderMillis));
        continue;
      }
      for (const statement of migration.sql) {
        if (statement.trim() !== "") await client.query(statement);
      }
      await client.query(`INSERT INTO ${table} (hash, created_at) VALUES ($1, $2)`, [
        migration.hash,
        migration.folderMillis,
      ]);
      applied += 1;
    }
    await client.query("COMMIT");
    return { applied, changedSinceApplied };
  } catch (error) {
    await client.query("ROLLBACK").catch((rollbackError: unknown) => {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw error;
  } finally {
    // A connection that could not even roll back is discarded, not reused.
    client.release(broken);
  }
}
