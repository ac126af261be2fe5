import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, runMigrations, type MigrationSet } from "../src/index.js";
import { dropDatabase, recreateDatabase, testServerUrl } from "../src/testing/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";

// Runs on the test run's embedded server, or on DATABASE_URL's PostgreSQL server when it is set.
const scratchName = `tessera_db_migrations_w${process.env["VITEST_POOL_ID"] ?? process.pid}`;

let url: string;

beforeAll(async () => {
  url = await recreateDatabase(testServerUrl(), scratchName);
});

afterAll(async () => {
  await dropDatabase(testServerUrl(), scratchName);
});

async function withPool<T>(work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = createPool({ url, max: 2 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

/** A copy of the fixture migrations that a test may change. */
async function copyOfFixtureMigrations(): Promise<MigrationSet & { cleanUp(): Promise<void> }> {
  const parent = await mkdtemp(join(tmpdir(), "tessera-migrations-"));
  const folder = join(parent, "migrations");
  await cp(fixtureMigrations.folder, folder, { recursive: true });
  return { schema: "fixture", folder, cleanUp: () => rm(parent, { recursive: true, force: true }) };
}

interface Journal {
  entries: { idx: number; version: string; when: number; tag: string; breakpoints: boolean }[];
}

async function fresh(): Promise<void> {
  await withPool(async (pool) => {
    await pool.query('DROP SCHEMA IF EXISTS "fixture" CASCADE');
    await pool.query('DROP TABLE IF EXISTS "drizzle"."fixture_migrations"');
  });
}

describe("runMigrations", () => {
  it("applies every migration of a set in order and records each in schema drizzle", async () => {
    await fresh();
    const reports = await withPool((pool) => runMigrations(pool, [fixtureMigrations]));
    expect(reports).toEqual([{ schema: "fixture", applied: 2, changedSinceApplied: [] }]);
    await withPool(async (pool) => {
      const columns = await pool.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
          WHERE table_schema = 'fixture' AND table_name = 'notes' ORDER BY ordinal_position`,
      );
      expect(columns.rows.map((row) => row.column_name)).toEqual(["id", "title", "created_at", "done"]);
      const recorded = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM "drizzle"."fixture_migrations"');
      expect(recorded.rows).toEqual([{ n: 2 }]);
    });
  });

  it("does nothing the second time", async () => {
    await fresh();
    await withPool((pool) => runMigrations(pool, [fixtureMigrations]));
    await withPool(async (pool) => {
      await pool.query("INSERT INTO fixture.notes (title) VALUES ('kept')");
      expect(await runMigrations(pool, [fixtureMigrations])).toEqual([{ schema: "fixture", applied: 0, changedSinceApplied: [] }]);
      const notes = await pool.query("SELECT title FROM fixture.notes");
      expect(notes.rows).toEqual([{ title: "kept" }]);
    });
  });

  it("lets two migrators started at once take turns: one applies, the other finds nothing to do", async () => {
    await fresh();
    const reports = await Promise.all([
      withPool((pool) => runMigrations(pool, [fixtureMigrations])),
      withPool((pool) => runMigrations(pool, [fixtureMigrations])),
    ]);
    expect(reports.map((report) => report[0]?.applied).sort()).toEqual([0, 2]);
  });

  it("rolls back the whole set when a migration fails", async () => {
    await fresh();
    await withPool((pool) => pool.query("CREATE SCHEMA fixture"));
    await expect(withPool((pool) => runMigrations(pool, [fixtureMigrations]))).rejects.toThrow(/already exists/);
    await withPool(async (pool) => {
      const recorded = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM "drizzle"."fixture_migrations"').catch(() => ({ rows: [{ n: 0 }] }));
      expect(recorded.rows).toEqual([{ n: 0 }]);
      const tables = await pool.query("SELECT tablename FROM pg_tables WHERE schemaname = 'fixture'");
      expect(tables.rows).toEqual([]);
    });
  });

  it("applies a migration merged in from another branch with an older timestamp than the last applied one", async () => {
    await fresh();
    const set = await copyOfFixtureMigrations();
    try {
      await withPool((pool) => runMigrations(pool, [set]));
      const journalFile = join(set.folder, "meta", "_journal.json");
      const journal = JSON.parse(await readFile(journalFile, "utf8")) as Journal;
      const first = journal.entries[0];
      if (first === undefined) throw new Error("the fixture journal is empty");
      journal.entries.push({ ...first, idx: 2, when: first.when + 1, tag: "0002_from_another_branch" });
      await writeFile(journalFile, JSON.stringify(journal));
      await writeFile(join(set.folder, "0002_from_another_branch.sql"), 'CREATE INDEX "notes_title_idx" ON "fixture"."notes" ("title");');
      await withPool(async (pool) => {
        expect(await runMigrations(pool, [set])).toEqual([{ schema: "fixture", applied: 1, changedSinceApplied: [] }]);
        const indexes = await pool.query("SELECT indexname FROM pg_indexes WHERE schemaname = 'fixture' AND indexname = 'notes_title_idx'");
        expect(indexes.rows).toEqual([{ indexname: "notes_title_idx" }]);
      });
    } finally {
      await set.cleanUp();
    }
  });

  it("reports an applied migration whose SQL has changed since, and leaves it alone", async () => {
    await fresh();
    const set = await copyOfFixtureMigrations();
    try {
      await withPool((pool) => runMigrations(pool, [set]));
      await appendFile(join(set.folder, "0001_add_done.sql"), "\n--> statement-breakpoint\nALTER TABLE \"fixture\".\"notes\" ADD COLUMN \"late\" text;");
      await withPool(async (pool) => {
        expect(await runMigrations(pool, [set])).toEqual([
          { schema: "fixture", applied: 0, changedSinceApplied: ["0001_add_done"] },
        ]);
        const late = await pool.query("SELECT column_name FROM information_schema.columns WHERE table_schema = 'fixture' AND column_name = 'late'");
        expect(late.rows).toEqual([]);
      });
    } finally {
      await set.cleanUp();
    }
  });
});
