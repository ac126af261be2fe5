import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/pglite";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { convertPgliteData } from "../src/postgres-server/convert-earlier-data.js";
import { createPool, runMigrations, startEmbeddedDatabase, type MigrationSet } from "../src/index.js";
import { dropDatabase, recreateDatabase, testServerUrl } from "../src/testing/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import * as schema from "./fixtures/schema.js";
import { queryOnce } from "./support/query-once.js";

const targetName = `tessera_db_convert_w${process.env["VITEST_POOL_ID"] ?? process.pid}`;
let parent: string;
let target: pg.Pool | undefined;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "tessera-convert-"));
  // Run by root, the embedded server runs as the account "postgres", which must be let through.
  await chmod(parent, 0o711);
});

afterEach(async () => {
  await target?.end();
  target = undefined;
});

afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
  await dropDatabase(testServerUrl(), targetName);
});

async function emptyTarget(): Promise<pg.Pool> {
  const pool = createPool({ url: await recreateDatabase(testServerUrl(), targetName), max: 2 });
  target = pool;
  return pool;
}

const templates = new Map<string, Promise<string>>();

/**
 * A PGlite data directory with `migrations` applied and nothing written, made
 * once per set of migrations: creating a PGlite database runs initdb in
 * WebAssembly, which takes seconds, and each test starts from a copy.
 */
function emptyPgliteDir(migrations: MigrationSet): Promise<string> {
  let made = templates.get(migrations.folder);
  if (made === undefined) {
    const home = join(parent, "templates", String(templates.size));
    const dataDir = join(home, "pglite");
    made = (async () => {
      await mkdir(home, { recursive: true });
      const pglite = await PGlite.create({ dataDir });
      try {
        await runMigrations(poolOf(pglite), [migrations]);
      } finally {
        await pglite.close();
      }
      return dataDir;
    })();
    templates.set(migrations.folder, made);
  }
  return made;
}

/**
 * A data directory as earlier versions wrote ./data/pglite: a PGlite database
 * (the same version they ran) with `migrations` applied by the same migrator,
 * then what `write` writes, if anything.
 */
async function pgliteDataDir(name: string, migrations: MigrationSet, write?: (db: ReturnType<typeof drizzle<typeof schema>>) => Promise<void>): Promise<string> {
  const dataDir = join(parent, name, "pglite");
  await mkdir(join(parent, name), { recursive: true });
  await cp(await emptyPgliteDir(migrations), dataDir, { recursive: true });
  if (write === undefined) return dataDir;
  const pglite = await PGlite.create({ dataDir });
  try {
    await write(drizzle(pglite, { schema }));
  } finally {
    await pglite.close();
  }
  return dataDir;
}

/** What the migrator uses of a pool (connect, query, release), on a PGlite database. */
function poolOf(pglite: PGlite): pg.Pool {
  const query = async (sql: string, params?: unknown[]) => {
    if (params !== undefined && params.length > 0) {
      const result = await pglite.query(sql, params);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    }
    const results = await pglite.exec(sql);
    const last = results.at(-1);
    return { rows: last?.rows ?? [], rowCount: last?.affectedRows ?? 0 };
  };
  const client = { query, release: () => undefined };
  return { connect: async () => client, query } as unknown as pg.Pool;
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
    const pgliteDir = await pgliteDataDir("older", older, async (db) => {
      await db.execute(sql`INSERT INTO fixture.notes (title) VALUES ('from an older version')`);
    });
    const pool = await emptyTarget();

    const report = await convertPgliteData({ pgliteDir, target: pool, migrations: [fixtureMigrations] });

    expect(report.tables).toContainEqual({ name: "drizzle.fixture_migrations", rows: 1 });
    expect(await runMigrations(pool, [fixtureMigrations])).toEqual([{ schema: "fixture", applied: 1, changedSinceApplied: [] }]);
    expect((await pool.query("SELECT title, done FROM fixture.notes")).rows).toEqual([{ title: "from an older version", done: false }]);
  });

  it("leaves the PGlite folder alone while an earlier version still has it open", async () => {
    const pgliteDir = await pgliteDataDir("open", fixtureMigrations);
    await writeFile(`${pgliteDir}.lock`, JSON.stringify({ pid: process.pid, url: null }));
    const pool = await emptyTarget();
    await expect(convertPgliteData({ pgliteDir, target: pool, migrations: [fixtureMigrations] })).rejects.toThrow(
      `${pgliteDir} is still open in process ${process.pid} (an earlier Tessera): stop it, then start again to convert its data.`,
    );
    expect(await readdir(join(parent, "open"))).toEqual(["pglite", "pglite.lock"]);
  });
});

describe("startEmbeddedDatabase on a ./data written by the PGlite version", () => {
  it("converts its data once, and keeps its folder renamed", async () => {
    const home = join(parent, "upgraded");
    await pgliteDataDir("upgraded", fixtureMigrations, async (db) => {
      await db.insert(schema.notes).values([{ title: "written by the PGlite version" }, { title: "and another" }]);
    });

    const first = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations] });
    try {
      expect(first.conversion?.tables).toEqual([
        { name: "drizzle.fixture_migrations", rows: 2 },
        { name: "fixture.counters", rows: 0 },
        { name: "fixture.notes", rows: 2 },
      ]);
      expect(await queryOnce(first.url, "SELECT id, title FROM fixture.notes ORDER BY id")).toEqual([
        { id: 1, title: "written by the PGlite version" },
        { id: 2, title: "and another" },
      ]);
    } finally {
      await first.stop();
    }
    expect((await readdir(home)).filter((name) => name.startsWith("pglite"))).toEqual([
      expect.stringMatching(/^pglite-converted-\d{4}-\d{2}-\d{2}$/),
    ]);

    const again = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations] });
    try {
      expect(again.conversion).toBeUndefined();
      expect(await queryOnce(again.url, "SELECT count(*)::int AS n FROM fixture.notes")).toEqual([{ n: 2 }]);
    } finally {
      await again.stop();
    }
  });

  it("leaves the conversion to npm start when started by a command that knows only its own migrations", async () => {
    const home = join(parent, "command-first");
    await pgliteDataDir("command-first", fixtureMigrations);
    await expect(startEmbeddedDatabase({ home, migrations: [], convert: false })).rejects.toThrow(
      `${join(home, "pglite")} holds data of an earlier Tessera that has not been converted yet: run \`npm start\` once in ${parent}, which converts it, or set DATABASE_URL to a PostgreSQL server.`,
    );
    expect(await readdir(home)).toContain("pglite");
  });

  it("never converts over a database that already holds its own data", async () => {
    const home = join(parent, "both");
    const running = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations] });
    await running.stop();
    await pgliteDataDir("other", fixtureMigrations, async (db) => {
      await db.insert(schema.notes).values({ title: "elsewhere" });
    });
    await mkdir(join(home, "pglite"));
    await cp(join(parent, "other", "pglite"), join(home, "pglite"), { recursive: true });

    await expect(startEmbeddedDatabase({ home, migrations: [fixtureMigrations] })).rejects.toThrow(
      `${join(home, "pglite")} holds data of an earlier Tessera (PGlite), but the database "tessera" of the PostgreSQL server beside it already has its own: move one of the two folders away and start again.`,
    );
    // The refusal stopped the server it had started: the next start is not refused as "already running".
    await rm(join(home, "pglite"), { recursive: true });
    const after = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations] });
    await after.stop();
  });
});
