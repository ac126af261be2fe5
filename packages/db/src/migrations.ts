import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readMigrationFiles, type MigrationMeta } from "drizzle-orm/migrator";
import type pg from "pg";
import { silentLogger, type Logger } from "./logger.js";
import { MigrationLockTimeout, isLockTimeout, lockRetryDelayMs, DEFAULT_MIGRATION_LOCK_ATTEMPTS, DEFAULT_MIGRATION_LOCK_TIMEOUT_MS } from "./migration-lock.js";
import { planMigration, type MigrationStep } from "./migration-plan.js";
import { withStatementTimeout } from "./statement-timeout.js";

/**
 * The migrations of one service: its PostgreSQL schema and the folders that
 * drizzle-kit's journal format describes (`<folder>/meta/_journal.json` and
 * numbered `.sql` files).
 */
export interface MigrationSet {
  /** The service's PostgreSQL schema, e.g. `signon`. */
  schema: string;
  /**
   * Absolute path of the folder of the migrations that the release before
   * can run against: applied before new instances start, and at every start.
   */
  folder: string;
  /**
   * Bookkeeping table of `folder`, in schema `drizzle` (drizzle's default),
   * default `<schema>_migrations`. Same columns as drizzle's own migrator, so
   * `drizzle-kit migrate` with `migrations: { schema: "drizzle", table }` agrees.
   */
  table?: string;
  /**
   * Absolute path of the folder of the post-deploy migrations, those that
   * would break the release before (they drop, rename or tighten): a journal
   * of their own, applied only by `runMigrations(…, { kind: "post-deploy" })`,
   * which the services never call at start. None: the set has none.
   */
  postDeployFolder?: string;
  /** Bookkeeping table of `postDeployFolder`, default `<schema>_post_deploy_migrations`. */
  postDeployTable?: string;
}

/**
 * The two kinds of migrations: `regular` ones, which the release before can
 * run against, and `post-deploy` ones, run once no instance of it remains.
 */
export type MigrationKind = "regular" | "post-deploy";

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
  /** Which kind to apply (default `regular`). */
  kind?: MigrationKind;
  /**
   * Per schema, the journal timestamps (`when`) of the only migrations to
   * apply; the others of that set are left for later. Used to rebuild a
   * database at the migration level of another one.
   */
  only?: ReadonlyMap<string, ReadonlySet<number>>;
  /**
   * How long a statement of a migration may wait for a table lock
   * (PostgreSQL's `lock_timeout` in its transaction; default 5,000 ms). While
   * an `ALTER TABLE` waits for a long transaction to end, every query of that
   * table queues behind it: a bound keeps that stall short.
   */
  lockTimeoutMs?: number;
  /** How many times a migration that met the lock timeout is run (default 5); after the last, {@link MigrationLockTimeout}. */
  lockAttempts?: number;
  /** The pause before the second attempt, doubled before each further one (default 1,000 ms, at most 30 s). */
  lockRetryDelayMs?: number;
  /** Where attempts that met the lock timeout, and steps of long migrations, are told. */
  log?: Logger;
}

/** Schema that holds every service's bookkeeping table. */
export const BOOKKEEPING_SCHEMA = "drizzle";

/** All migrators take this advisory lock, so concurrent start-ups (and the commands) take turns. */
const LOCK_NAME = "tessera.migrations";

/** The longest pause between two tries of a migrator waiting for another's advisory lock. */
const LOCK_POLL_MAX_MS = 250;

/**
 * Opens a transaction on `client` that holds the migrations' advisory lock. A migrator that finds it taken tries
 * again a moment later, each try a transaction of its own that ends at once, rather than wait inside one: a
 * statement waiting for a lock holds a snapshot, its transaction stays open until it gets the lock, and
 * `CREATE INDEX CONCURRENTLY` (run by the holder on another connection, `applyInSteps`) waits for every transaction
 * that held a snapshot older than its own, so the two would wait for each other with no end and nothing to break it
 * (two instances starting at once on a database that needs such an index).
 */
async function takeMigrationLock(client: pg.PoolClient): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    await client.query("BEGIN");
    const taken = await client.query<{ taken: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtextextended('${LOCK_NAME}', 0)) AS taken`);
    if (taken.rows[0]?.taken === true) return;
    await client.query("ROLLBACK");
    const pause = Math.min(LOCK_POLL_MAX_MS, 10 * 2 ** Math.min(attempt, 5));
    await new Promise((resolve) => setTimeout(resolve, pause / 2 + Math.random() * (pause / 2)));
  }
}

/** The folder and bookkeeping table of one kind of `set`'s migrations; null when it has none of that kind. */
export function migrationSource(set: MigrationSet, kind: MigrationKind = "regular"): { folder: string; table: string } | null {
  if (kind === "regular") return { folder: set.folder, table: set.table ?? `${set.schema}_migrations` };
  if (set.postDeployFolder === undefined) return null;
  return { folder: set.postDeployFolder, table: set.postDeployTable ?? `${set.schema}_post_deploy_migrations` };
}

/** The bookkeeping table of one kind of a migration set. */
export function bookkeepingTable(set: MigrationSet, kind: MigrationKind = "regular"): string {
  return migrationSource(set, kind)?.table ?? `${set.schema}_post_deploy_migrations`;
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Whether `folder` holds a journal (a post-deploy folder may not exist yet in an older checkout). */
function hasJournal(folder: string): boolean {
  return existsSync(join(folder, "meta", "_journal.json"));
}

/**
 * Applies the pending migrations of one kind of each set, in journal order. A
 * migration is pending when its journal timestamp is not recorded, so one
 * merged in from another branch with an older timestamp than the last applied
 * one is still applied (drizzle's own migrator would skip it).
 *
 * Each migration runs in a transaction of its own that first takes a
 * transaction-level advisory lock, then checks that it is still pending: two
 * instances starting at once against one PostgreSQL take turns, and the
 * second finds nothing left to do. Its statements wait for a table lock at
 * most `lockTimeoutMs`; a migration that met that bound is rolled back and
 * run again, up to `lockAttempts` times. A failing migration is rolled back
 * whole; those before it stay applied.
 *
 * A migration whose statements cannot run in a transaction (`CREATE INDEX
 * CONCURRENTLY`) or are batches (see `isBatch`) runs step by step instead,
 * while another connection holds the advisory lock: an index left invalid by
 * an earlier attempt is dropped and built again, one already built is kept,
 * and a batch is run, each time in a transaction of its own, until it changes
 * no row.
 *
 * Statements have no time bound besides the lock timeout (the pool's
 * statement timeout does not apply): a migration may fill a large table, and
 * waiting for the advisory lock lasts as long as another instance's migrations.
 *
 * @throws {MigrationLockTimeout} when a migration met the lock timeout at every attempt.
 */
export function runMigrations(pool: pg.Pool, sets: readonly MigrationSet[], options: RunMigrationsOptions = {}): Promise<MigrationReport[]> {
  return withStatementTimeout(null, () => migrateSets(pool, sets, options));
}

async function migrateSets(pool: pg.Pool, sets: readonly MigrationSet[], options: RunMigrationsOptions): Promise<MigrationReport[]> {
  const reports: MigrationReport[] = [];
  for (const set of sets) {
    const source = migrationSource(set, options.kind);
    if (source === null || !hasJournal(source.folder)) {
      reports.push({ schema: set.schema, applied: 0, changedSinceApplied: [] });
      continue;
    }
    const only = options.only?.get(set.schema);
    const tags = journalTags(source.folder);
    const chosen = readMigrationFiles({ migrationsFolder: source.folder })
      .map((migration, index) => ({ migration, tag: tags[index] ?? String(migration.folderMillis) }))
      .filter(({ migration }) => only === undefined || only.has(migration.folderMillis));
    const migrator = new SetMigrator(pool, set.schema, source.table, options);
    reports.push({ schema: set.schema, ...(await migrator.apply(chosen)) });
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Applies the migrations of one folder, recording each in its bookkeeping table. */
class SetMigrator {
  private readonly table: string;
  private readonly lockTimeoutMs: number;
  private readonly attempts: number;
  private readonly log: Logger;

  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    table: string,
    private readonly options: RunMigrationsOptions,
  ) {
    this.table = `${quoteIdentifier(BOOKKEEPING_SCHEMA)}.${quoteIdentifier(table)}`;
    this.lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_MIGRATION_LOCK_TIMEOUT_MS;
    this.attempts = Math.max(1, options.lockAttempts ?? DEFAULT_MIGRATION_LOCK_ATTEMPTS);
    this.log = options.log ?? silentLogger;
  }

  async apply(migrations: readonly { migration: MigrationMeta; tag: string }[]): Promise<Omit<MigrationReport, "schema">> {
    await this.inLockedTransaction(async (client) => {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(BOOKKEEPING_SCHEMA)}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.table} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
    });
    const recorded = await this.pool.query<{ hash: string; created_at: string | null }>(`SELECT hash, created_at FROM ${this.table}`);
    const hashByTimestamp = new Map(recorded.rows.map((row) => [Number(row.created_at), row.hash]));
    let applied = 0;
    const changedSinceApplied: string[] = [];
    for (const { migration, tag } of migrations) {
      const recordedHash = hashByTimestamp.get(migration.folderMillis);
      if (recordedHash !== undefined) {
        if (recordedHash !== migration.hash) changedSinceApplied.push(tag);
        continue;
      }
      const plan = await planMigration(migration.sql.join("\n"));
      if (plan.mode === "mixed") {
        throw new Error(
          `Migration ${tag} of schema ${this.schema} mixes statements that run outside a transaction (CONCURRENTLY) or as batches with others ` +
            `(${plan.statements[0]?.slice(0, 80) ?? ""}…): give those a migration of their own`,
        );
      }
      const done = plan.mode === "transaction" ? await this.applyInTransaction(migration, tag) : await this.applyInSteps(migration, tag, plan.steps);
      if (done) applied += 1;
    }
    return { applied, changedSinceApplied };
  }

  /** Runs `work` in a transaction that holds the migrations' advisory lock; a connection that could not roll back is discarded. */
  private async inLockedTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      // No parameters on this connection: a statement sent with parameters keeps its snapshot until the next one, and
      // `CREATE INDEX CONCURRENTLY` waits for every transaction that holds a snapshot (see applyInSteps).
      await takeMigrationLock(client);
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  private async isRecorded(client: pg.PoolClient, migration: MigrationMeta): Promise<boolean> {
    // A journal timestamp is an integer: written into the statement, which then needs no parameters (see inLockedTransaction).
    if (!Number.isSafeInteger(migration.folderMillis)) throw new Error(`The journal's timestamp ${String(migration.folderMillis)} is not an integer`);
    const found = await client.query(`SELECT 1 FROM ${this.table} WHERE created_at = ${migration.folderMillis}`);
    return (found.rowCount ?? 0) > 0;
  }

  private async record(client: pg.PoolClient, migration: MigrationMeta): Promise<void> {
    await client.query(`INSERT INTO ${this.table} (hash, created_at) VALUES ($1, $2)`, [migration.hash, migration.folderMillis]);
  }

  /** `work`, run again after a pause when it met the lock timeout, up to the attempts allowed. */
  private async retryingLockTimeouts<T>(tag: string, work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (!isLockTimeout(error)) throw error;
        if (attempt >= this.attempts) throw new MigrationLockTimeout({ schema: this.schema, tag, lockTimeoutMs: this.lockTimeoutMs, attempts: attempt, cause: error });
        const delay = lockRetryDelayMs(attempt, this.options.lockRetryDelayMs);
        this.log.warn(
          `database: migration ${tag} of schema ${this.schema} waited ${this.lockTimeoutMs} ms for a lock and was rolled back ` +
            `(attempt ${attempt} of ${this.attempts}); trying again in ${delay} ms`,
        );
        await sleep(delay);
      }
    }
  }

  /** The usual case: every statement in one transaction, recorded in it. False when another process applied it first. */
  private applyInTransaction(migration: MigrationMeta, tag: string): Promise<boolean> {
    return this.retryingLockTimeouts(tag, () =>
      this.inLockedTransaction(async (client) => {
        if (await this.isRecorded(client, migration)) return false;
        // Only once the advisory lock is held: waiting for another instance's migrations is not a stall.
        await client.query("SELECT set_config('lock_timeout', $1, true)", [`${this.lockTimeoutMs}ms`]);
        for (const statement of migration.sql) {
          if (statement.trim() !== "") await client.query(statement);
        }
        await this.record(client, migration);
        return true;
      }),
    );
  }

  /**
   * A migration of statements that run outside a transaction or as batches:
   * one connection holds the advisory lock in an open transaction (it takes
   * no snapshot, so `CREATE INDEX CONCURRENTLY` does not wait for it) and
   * records the migration at the end; another runs the steps.
   */
  private async applyInSteps(migration: MigrationMeta, tag: string, steps: readonly MigrationStep[]): Promise<boolean> {
    return this.inLockedTransaction(async (holder) => {
      if (await this.isRecorded(holder, migration)) return false;
      const worker = await this.pool.connect();
      let broken: Error | undefined;
      try {
        for (const step of steps) {
          if (step.mode === "batch") await this.runBatches(worker, step, tag);
          else await this.runAlone(worker, step, tag);
        }
      } catch (error) {
        // A batch's transaction may be open still.
        await worker.query("ROLLBACK").catch((rollbackError: unknown) => {
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        });
        throw error;
      } finally {
        worker.release(broken);
      }
      await this.record(holder, migration);
      return true;
    });
  }

  /** A statement outside any transaction; an index of the same name is kept when valid, dropped first when left invalid. */
  private async runAlone(worker: pg.PoolClient, step: MigrationStep, tag: string): Promise<void> {
    if (step.index !== undefined) {
      const found = await worker.query<{ valid: boolean; qualified: string }>(
        `SELECT i.indisvalid AS valid, format('%I.%I', n.nspname, c.relname) AS qualified
           FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relname = $1 AND n.nspname = coalesce($2, current_schema())`,
        [step.index.name, step.index.schema],
      );
      const existing = found.rows[0];
      if (existing?.valid === true) {
        this.log.info(`database: migration ${tag} of schema ${this.schema}: index ${existing.qualified} is there already`);
        return;
      }
      if (existing !== undefined) {
        this.log.warn(`database: migration ${tag} of schema ${this.schema}: index ${existing.qualified} was left invalid by an earlier attempt; building it again`);
        await worker.query(`DROP INDEX CONCURRENTLY IF EXISTS ${existing.qualified}`);
      }
    }
    await worker.query(step.text);
  }

  /**
   * A batch, run again until it changes nothing, each run in a transaction of
   * its own with the lock timeout. It must leave out the rows it has done; one
   * that goes on past three times the table's estimated rows (and at least
   * 10,000) is stopped as never ending.
   */
  private async runBatches(worker: pg.PoolClient, step: MigrationStep, tag: string): Promise<void> {
    const estimate = step.target === undefined ? 0 : await estimatedRows(worker, step.target);
    const limit = Math.max(10_000, 3 * estimate);
    let changed = 0;
    let batches = 0;
    for (;;) {
      const rows = await this.retryingLockTimeouts(tag, async () => {
        await worker.query("BEGIN");
        try {
          await worker.query("SELECT set_config('lock_timeout', $1, true)", [`${this.lockTimeoutMs}ms`]);
          const result = await worker.query(step.text);
          await worker.query("COMMIT");
          return result.rowCount ?? 0;
        } catch (error) {
          await worker.query("ROLLBACK");
          throw error;
        }
      });
      if (rows === 0) break;
      changed += rows;
      batches += 1;
      if (batches % 100 === 0) this.log.info(`database: migration ${tag} of schema ${this.schema}: ${changed} row(s) changed in ${batches} batches so far`);
      if (changed > limit) {
        throw new Error(
          `Migration ${tag} of schema ${this.schema}: the batch has changed ${changed} rows of ${step.target ?? "its table"} (about ${estimate} rows) and goes on: ` +
            `its sub-select must leave out the rows already done`,
        );
      }
    }
    if (batches > 0) this.log.info(`database: migration ${tag} of schema ${this.schema}: ${changed} row(s) changed in ${batches} batch(es)`);
  }
}

/** PostgreSQL's estimate of the rows of `table` (`schema.name`), 0 when unknown. */
async function estimatedRows(client: pg.PoolClient, table: string): Promise<number> {
  const found = await client.query<{ rows: string | null }>("SELECT greatest(reltuples, 0)::bigint AS rows FROM pg_class WHERE oid = to_regclass($1)", [table]);
  return Number(found.rows[0]?.rows ?? 0);
}
