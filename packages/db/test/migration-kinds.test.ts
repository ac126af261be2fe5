import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createPool, MigrationLockTimeout, pendingMigrations, runMigrations, type MigrationSet } from "../src/index.js";
import { dropDatabase, recreateDatabase, testServerUrl } from "../src/testing/index.js";

// The two kinds of migrations, the lock timeout and the statements that run outside a transaction, on a real
// PostgreSQL server: the test run's embedded one, or DATABASE_URL's when it is set.
const scratchName = `tessera_db_kinds_w${process.env["VITEST_POOL_ID"] ?? process.pid}`;

let url: string;
let parent: string;
let pool: pg.Pool;

beforeAll(async () => {
  url = await recreateDatabase(testServerUrl(), scratchName);
  parent = await mkdtemp(join(tmpdir(), "tessera-kinds-"));
  pool = createPool({ url, max: 4 });
});

afterAll(async () => {
  await pool.end();
  await rm(parent, { recursive: true, force: true });
  await dropDatabase(testServerUrl(), scratchName);
});

beforeEach(async () => {
  await pool.query('DROP SCHEMA IF EXISTS "kinds" CASCADE');
  await pool.query('DROP TABLE IF EXISTS "drizzle"."kinds_migrations", "drizzle"."kinds_post_deploy_migrations"');
});

let folders = 0;

/** A folder of migrations in drizzle-kit's layout: a journal and one `.sql` file per entry. */
async function migrationFolder(migrations: readonly { tag: string; sql: string }[]): Promise<string> {
  const folder = join(parent, `folder-${(folders += 1)}`);
  await mkdir(join(folder, "meta"), { recursive: true });
  const entries = migrations.map(({ tag }, idx) => ({ idx, version: "7", when: 1_800_000_000_000 + folders * 1000 + idx, tag, breakpoints: true }));
  await writeFile(join(folder, "meta", "_journal.json"), JSON.stringify({ version: "7", dialect: "postgresql", entries }));
  for (const { tag, sql } of migrations) await writeFile(join(folder, `${tag}.sql`), sql);
  return folder;
}

const createNotes = {
  tag: "0000_notes",
  sql: `CREATE SCHEMA "kinds";--> statement-breakpoint
CREATE TABLE "kinds"."notes" ("id" integer PRIMARY KEY, "body" text, "legacy" text);`,
};

async function columnsOfNotes(): Promise<string[]> {
  const { rows } = await pool.query<{ column_name: string }>(
    "SELECT column_name FROM information_schema.columns WHERE table_schema = 'kinds' AND table_name = 'notes' ORDER BY ordinal_position",
  );
  return rows.map((row) => row.column_name);
}

/** A connection of its own, for holding locks the way a long transaction of a running service would. */
async function otherConnection(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

describe("post-deploy migrations", () => {
  it("are applied only when asked for, from a folder and journal of their own, and recorded in a table of their own", async () => {
    const set: MigrationSet = {
      schema: "kinds",
      folder: await migrationFolder([createNotes, { tag: "0001_add_title", sql: 'ALTER TABLE "kinds"."notes" ADD COLUMN "title" text;' }]),
      postDeployFolder: await migrationFolder([{ tag: "0000_drop_legacy", sql: 'ALTER TABLE "kinds"."notes" DROP COLUMN "legacy";' }]),
    };
    const runQuery = async (text: string) => (await pool.query<Record<string, unknown>>(text)).rows;

    expect(await runMigrations(pool, [set])).toEqual([{ schema: "kinds", applied: 2, changedSinceApplied: [] }]);
    expect(await columnsOfNotes()).toEqual(["id", "body", "legacy", "title"]);
    expect(await pendingMigrations(runQuery, [set])).toEqual([]);
    expect(await pendingMigrations(runQuery, [set], "post-deploy")).toEqual(["0000_drop_legacy"]);
    // A start runs the regular kind again: nothing to do, and the post-deploy one still waits.
    expect(await runMigrations(pool, [set])).toEqual([{ schema: "kinds", applied: 0, changedSinceApplied: [] }]);
    expect(await columnsOfNotes()).toContain("legacy");

    expect(await runMigrations(pool, [set], { kind: "post-deploy" })).toEqual([{ schema: "kinds", applied: 1, changedSinceApplied: [] }]);
    expect(await columnsOfNotes()).toEqual(["id", "body", "title"]);
    expect(await pendingMigrations(runQuery, [set], "post-deploy")).toEqual([]);
    expect(await runMigrations(pool, [set], { kind: "post-deploy" })).toEqual([{ schema: "kinds", applied: 0, changedSinceApplied: [] }]);
    const counts = await pool.query<{ regular: number; post: number }>(
      'SELECT (SELECT count(*)::int FROM "drizzle"."kinds_migrations") AS regular, (SELECT count(*)::int FROM "drizzle"."kinds_post_deploy_migrations") AS post',
    );
    expect(counts.rows[0]).toEqual({ regular: 2, post: 1 });
  });

  it("are nothing to do for a set without a post-deploy folder, or one not there yet", async () => {
    const folder = await migrationFolder([createNotes]);
    expect(await runMigrations(pool, [{ schema: "kinds", folder }], { kind: "post-deploy" })).toEqual([{ schema: "kinds", applied: 0, changedSinceApplied: [] }]);
    expect(await runMigrations(pool, [{ schema: "kinds", folder, postDeployFolder: join(parent, "missing") }], { kind: "post-deploy" })).toEqual([
      { schema: "kinds", applied: 0, changedSinceApplied: [] },
    ]);
  });
});

describe("the lock timeout", () => {
  it("gives a migration up after the timeout at every attempt, with a clear error, without holding up other queries meanwhile; it applies once the lock is released", async () => {
    const set: MigrationSet = {
      schema: "kinds",
      folder: await migrationFolder([createNotes, { tag: "0001_add_title", sql: 'ALTER TABLE "kinds"."notes" ADD COLUMN "title" text;' }]),
    };
    await runMigrations(pool, [set], { only: new Map([["kinds", new Set([1_800_000_000_000 + folders * 1000])]]) });
    await pool.query(`INSERT INTO "kinds"."notes" (id, body) VALUES (1, 'kept')`);

    // A long transaction of a running instance: it has read the table and stays open.
    const longTransaction = await otherConnection();
    await longTransaction.query("BEGIN");
    await longTransaction.query(`SELECT * FROM "kinds"."notes"`);
    try {
      const warnings: string[] = [];
      let settled = false;
      const migrating = runMigrations(pool, [set], { lockTimeoutMs: 300, lockAttempts: 3, lockRetryDelayMs: 400, log: { info: () => {}, warn: (line) => warnings.push(line) } }).finally(
        () => (settled = true),
      );
      migrating.catch(() => undefined);
      // While the ALTER TABLE waits for its lock, a query of the table queues behind it; the timeout ends that.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const reader = await otherConnection();
      try {
        const read = await reader.query<{ body: string }>(`SELECT body FROM "kinds"."notes"`);
        expect(read.rows).toEqual([{ body: "kept" }]);
        expect(settled, "the read was answered while the migration was still trying").toBe(false);
      } finally {
        await reader.end();
      }

      const error: unknown = await migrating.then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(MigrationLockTimeout);
      expect((error as Error).message).toBe(
        "migration 0001_add_title of schema kinds could not take a lock within 300 ms, 3 time(s) (DATABASE_MIGRATION_LOCK_TIMEOUT_MS, DATABASE_MIGRATION_LOCK_ATTEMPTS), " +
          "and was not applied: a transaction holds a lock on a table it changes. Find it with SELECT pid, state, xact_start, query FROM pg_stat_activity " +
          "WHERE xact_start < now() - interval '1 minute', end it (or wait for it), and migrate again",
      );
      expect(((error as Error).cause as { code?: string }).code).toBe("55P03");
      expect(warnings).toEqual([
        "database: migration 0001_add_title of schema kinds waited 300 ms for a lock and was rolled back (attempt 1 of 3); trying again in 400 ms",
        "database: migration 0001_add_title of schema kinds waited 300 ms for a lock and was rolled back (attempt 2 of 3); trying again in 800 ms",
      ]);
      expect(await columnsOfNotes()).toEqual(["id", "body", "legacy"]);
    } finally {
      await longTransaction.query("COMMIT");
      await longTransaction.end();
    }

    expect(await runMigrations(pool, [set], { lockTimeoutMs: 300, lockAttempts: 3 })).toEqual([{ schema: "kinds", applied: 1, changedSinceApplied: [] }]);
    expect(await columnsOfNotes()).toEqual(["id", "body", "legacy", "title"]);
  });

  it("applies a migration whose first attempt met a lock that was released before the next", async () => {
    const folder = await migrationFolder([createNotes, { tag: "0001_add_title", sql: 'ALTER TABLE "kinds"."notes" ADD COLUMN "title" text;' }]);
    const set: MigrationSet = { schema: "kinds", folder };
    await runMigrations(pool, [set], { only: new Map([["kinds", new Set([1_800_000_000_000 + folders * 1000])]]) });
    const longTransaction = await otherConnection();
    await longTransaction.query("BEGIN");
    await longTransaction.query(`LOCK TABLE "kinds"."notes" IN ACCESS SHARE MODE`);
    const warnings: string[] = [];
    const migrating = runMigrations(pool, [set], {
      lockTimeoutMs: 200,
      lockAttempts: 5,
      lockRetryDelayMs: 100,
      log: {
        info: () => {},
        warn: (line) => {
          warnings.push(line);
          // The long transaction ends while the migration waits to try again.
          if (warnings.length === 1) void longTransaction.query("COMMIT").then(() => longTransaction.end());
        },
      },
    });
    expect(await migrating).toEqual([{ schema: "kinds", applied: 1, changedSinceApplied: [] }]);
    expect(warnings).toHaveLength(1);
    expect(await columnsOfNotes()).toEqual(["id", "body", "legacy", "title"]);
  });
});

describe("statements that cannot run in a transaction, and batches", () => {
  it("builds an index CONCURRENTLY outside a transaction while writes go on, and builds one left invalid by an earlier attempt again", async () => {
    const indexNotes = { tag: "0001_index_body", sql: 'CREATE INDEX CONCURRENTLY IF NOT EXISTS "notes_body_idx" ON "kinds"."notes" USING btree ("body");' };
    const set: MigrationSet = { schema: "kinds", folder: await migrationFolder([createNotes, indexNotes]) };
    await runMigrations(pool, [set], { only: new Map([["kinds", new Set([1_800_000_000_000 + folders * 1000])]]) });
    // What a build that failed half-way leaves: an index marked invalid.
    await pool.query(`CREATE INDEX "notes_body_idx" ON "kinds"."notes" ("body")`);
    await pool.query(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'kinds.notes_body_idx'::regclass`).catch(async () => {
      // Without the right to change the catalogue (an outside server's ordinary role), an index that is simply absent will do.
      await pool.query(`DROP INDEX "kinds"."notes_body_idx"`);
    });
    const lines: string[] = [];
    expect(await runMigrations(pool, [set], { log: { info: (line) => lines.push(line), warn: (line) => lines.push(line) } })).toEqual([
      { schema: "kinds", applied: 1, changedSinceApplied: [] },
    ]);
    const index = await pool.query<{ valid: boolean }>(`SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = 'kinds.notes_body_idx'::regclass`);
    expect(index.rows).toEqual([{ valid: true }]);
    expect(await pool.query(`SELECT 1 FROM "drizzle"."kinds_migrations"`).then((result) => result.rowCount)).toBe(2);
  });

  it("lets two migrators started at once take turns over a migration that builds an index CONCURRENTLY", async () => {
    // Rows enough that the build takes a moment, while the second migrator waits for the advisory lock.
    await pool.query('CREATE SCHEMA "kinds"');
    await pool.query('CREATE TABLE "kinds"."notes" ("id" integer PRIMARY KEY, "body" text, "legacy" text)');
    await pool.query(`INSERT INTO "kinds"."notes" SELECT n, md5(n::text), null FROM generate_series(1, 200000) n`);
    const created = { ...createNotes, sql: 'CREATE SCHEMA IF NOT EXISTS "kinds";--> statement-breakpoint\nCREATE TABLE IF NOT EXISTS "kinds"."notes" ("id" integer PRIMARY KEY, "body" text, "legacy" text);' };
    const indexNotes = { tag: "0001_index_body", sql: 'CREATE INDEX CONCURRENTLY "notes_body_idx" ON "kinds"."notes" USING btree ("body");' };
    const set: MigrationSet = { schema: "kinds", folder: await migrationFolder([created, indexNotes]) };
    // Each as an instance of its own would: a pool of its own.
    const pools = [createPool({ url, max: 4 }), createPool({ url, max: 4 })];
    try {
      const reports = await Promise.all(pools.map((own) => runMigrations(own, [set])));
      // Between them, each migration once (which one applies which depends on who takes the lock first).
      expect(reports.reduce((sum, [report]) => sum + (report?.applied ?? 0), 0)).toBe(2);
    } finally {
      await Promise.all(pools.map((own) => own.end()));
    }
    const index = await pool.query<{ valid: boolean }>(`SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = 'kinds.notes_body_idx'::regclass`);
    expect(index.rows).toEqual([{ valid: true }]);
  }, 60_000);

  it("runs a batch again, each time in a transaction of its own, until it changes nothing", async () => {
    const backfill = {
      tag: "0001_backfill_body",
      sql: `UPDATE "kinds"."notes" SET "body" = 'note ' || "id" WHERE "id" IN (SELECT "id" FROM "kinds"."notes" WHERE "body" IS NULL ORDER BY "id" LIMIT 7);`,
    };
    const set: MigrationSet = { schema: "kinds", folder: await migrationFolder([createNotes, backfill]) };
    await runMigrations(pool, [set], { only: new Map([["kinds", new Set([1_800_000_000_000 + folders * 1000])]]) });
    await pool.query(`INSERT INTO "kinds"."notes" (id) SELECT generate_series(1, 30)`);
    const lines: string[] = [];
    expect(await runMigrations(pool, [set], { log: { info: (line) => lines.push(line), warn: (line) => lines.push(line) } })).toEqual([
      { schema: "kinds", applied: 1, changedSinceApplied: [] },
    ]);
    expect(lines).toEqual(["database: migration 0001_backfill_body of schema kinds: 30 row(s) changed in 5 batch(es)"]);
    const left = await pool.query(`SELECT 1 FROM "kinds"."notes" WHERE "body" IS DISTINCT FROM 'note ' || "id"`);
    expect(left.rowCount).toBe(0);
  });

  it("stops a batch that never leaves out the rows it has done", async () => {
    const endless = {
      tag: "0001_endless",
      sql: `UPDATE "kinds"."notes" SET "body" = 'x' WHERE "id" IN (SELECT "id" FROM "kinds"."notes" WHERE "id" > 0 LIMIT 5000);`,
    };
    const set: MigrationSet = { schema: "kinds", folder: await migrationFolder([createNotes, endless]) };
    await runMigrations(pool, [set], { only: new Map([["kinds", new Set([1_800_000_000_000 + folders * 1000])]]) });
    await pool.query(`INSERT INTO "kinds"."notes" (id) SELECT generate_series(1, 10)`);
    await expect(runMigrations(pool, [set])).rejects.toThrow(/the batch has changed 10010 rows of kinds\.notes .* its sub-select must leave out the rows already done/);
    expect(await pool.query(`SELECT 1 FROM "drizzle"."kinds_migrations"`).then((result) => result.rowCount)).toBe(1);
  });

  it("refuses a migration that mixes CONCURRENTLY with ordinary statements, before running any of it", async () => {
    const mixed = {
      tag: "0001_mixed",
      sql: `ALTER TABLE "kinds"."notes" ADD COLUMN "title" text;--> statement-breakpoint
CREATE INDEX CONCURRENTLY "notes_title_idx" ON "kinds"."notes" ("title");`,
    };
    const set: MigrationSet = { schema: "kinds", folder: await migrationFolder([createNotes, mixed]) };
    await expect(runMigrations(pool, [set])).rejects.toThrow(/Migration 0001_mixed of schema kinds mixes statements that run outside a transaction/);
    expect(await columnsOfNotes()).toEqual(["id", "body", "legacy"]);
  });
});
