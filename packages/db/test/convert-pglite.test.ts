import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { convertPgliteData } from "../src/postgres-server/convert-pglite.js";
import { createPool, runMigrations, startDatabase, type MigrationSet } from "../src/index.js";
import { dropDatabase, recreateDatabase, testServerUrl } from "../src/testing/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import * as schema from "./fixtures/schema.js";

const targetName = `tessera_db_convert_w${process.env["VITEST_POOL_ID"] ?? process.pid}`;
let parent: string;
let target: pg.Pool;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "tessera-convert-"));
});

afterEach(async () => {
  await target?.end();
});

afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
  await dropDatabase(testServerUrl(), targetName);
});

async function emptyTarget(): Promise<pg.Pool> {
  target = createPool({ url: await recreateDatabase(testServerUrl(), targetName), max: 2 });
  return target;
}

/** A data directory written the way earlier versions wrote ./data/pglite: startDatabase without a URL. */
async function pgliteDataDir(name: string, migrations: MigrationSet, write: (db: Awaited<ReturnType<typeof openPglite>>["db"]) => Promise<void>): Promise<string> {
  const dataDir = join(parent, name, "pglite");
  const database = await openPglite(dataDir, migrations);
  try {
    await write(database.db);
  } finally {
    await database.close();
  }
  return dataDir;
}

function openPglite(dataDir: string, migrations: MigrationSet) {
  return startDatabase({ dataDir, migrations: [migrations], schema });
}

/** The fixture migrations without the last one, as an older version had them. */
async function firstMigrationOnly(): Promise<MigrationSet> {
  const folder = join(parent, "first-only");
  await cp(fixtureMigrations.folder, folder, { recursive: true });
  await rm(join(folder, "0001_add_done.sql"));
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(await readFile(journalPath, "utf8")) as { entries: unknown[] };
  journal.entries = journal.entries.slice(0, 1);
  await writeFile(journalPath, JSON.stringify(journal));
  return { schema: "fixture", folder };
}

describe("convertPgliteData", () => {
  it("copies every row, keeps sequences where they stood, checks the counts and keeps the old folder renamed", async () => {
    let written: unknown[] = [];
    const pgliteDir = await pgliteDataDir("current", fixtureMigrations, async (db) => {
      written = await db
        .insert(schema.notes)
        .values([{ title: "first" }, { title: "second, done", done: true }, { title: "deleted later" }])
        .returning();
      await db.delete(schema.notes).where(eq(schema.notes.title, "deleted later"));
      await db.insert(schema.counters).values({ name: "visits", value: 7 });
    });
    const pool = await emptyTarget();

    const report = await convertPgliteData({ pgliteDir, target: pool, migrations: [fixtureMigrations] });

    expect(report.tables).toEqual([
      { name: "drizzle.fixture_migrations", rows: 2 },
      { name: "fixture.counters", rows: 1 },
      { name: "fixture.notes", rows: 2 },
    ]);
    expect(report.keptAt).toMatch(/pglite-converted-\d{4}-\d{2}-\d{2}$/);
    expect(await readdir(join(parent, "current"))).toEqual([report.keptAt.split("/").at(-1)]);
    const notes = await pool.query('SELECT id, title, done, created_at AS "createdAt" FROM fixture.notes ORDER BY id');
    expect(notes.rows).toEqual(written.slice(0, 2));
    expect((await pool.query("SELECT name, value FROM fixture.counters")).rows).toEqual([{ name: "visits", value: 7 }]);
    const next = await pool.query<{ id: number }>("INSERT INTO fixture.notes (title) VALUES ('after') RETURNING id");
    expect(next.rows).toEqual([{ id: 4 }]);
    expect(await runMigrations(pool, [fixtureMigrations])).toEqual([{ schema: "fixture", applied: 0, changedSinceApplied: [] }]);
  });

  it("rebuilds an older migration level, so the services' next start applies the rest to the copied rows", async () => {
    const older = await firstMigrationOnly();
    const pgliteDir = join(parent, "older", "pglite");
    const database = await startDatabase({ dataDir: pgliteDir, migrations: [older] });
    await database.pool.query("INSERT INTO fixture.notes (title) VALUES ('from an older version')");
    await database.close();
    const pool = await emptyTarget();

    const report = await convertPgliteData({ pgliteDir, target: pool, migrations: [fixtureMigrations] });

    expect(report.tables).toContainEqual({ name: "drizzle.fixture_migrations", rows: 1 });
    expect(await runMigrations(pool, [fixtureMigrations])).toEqual([{ schema: "fixture", applied: 1, changedSinceApplied: [] }]);
    expect((await pool.query("SELECT title, done FROM fixture.notes")).rows).toEqual([{ title: "from an older version", done: false }]);
  });

  it("leaves the PGlite folder alone while an earlier version still has it open", async () => {
    const pgliteDir = await pgliteDataDir("open", fixtureMigrations, async () => {});
    await writeFile(`${pgliteDir}.lock`, JSON.stringify({ pid: process.pid, url: null }));
    const pool = await emptyTarget();
    await expect(convertPgliteData({ pgliteDir, target: pool, migrations: [fixtureMigrations] })).rejects.toThrow(
      `${pgliteDir} is still open in process ${process.pid} (an earlier Tessera): stop it, then start again to convert its data.`,
    );
    expect(await readdir(join(parent, "open"))).toEqual(["pglite", "pglite.lock"]);
  });
});
