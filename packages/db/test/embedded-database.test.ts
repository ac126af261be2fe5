import { chmod, cp, mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDatabase, startEmbeddedDatabase } from "../src/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";

let parent: string;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "tessera-embedded-"));
  // Run by root, the server runs as the account "postgres", which must be let through.
  await chmod(parent, 0o711);
});

afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** What earlier versions left in ./data: PGlite's folder, written by startDatabase without a URL. */
async function earlierVersionData(home: string, titles: string[]): Promise<void> {
  const database = await startDatabase({ dataDir: join(home, "pglite"), migrations: [fixtureMigrations] });
  try {
    for (const title of titles) await database.pool.query("INSERT INTO fixture.notes (title) VALUES ($1)", [title]);
  } finally {
    await database.close();
  }
}

describe("startEmbeddedDatabase", () => {
  it("creates the cluster and the services' database, and finds them again at the next start", async () => {
    const home = join(parent, "fresh");
    const first = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations] });
    try {
      expect(first.conversion).toBeUndefined();
      expect(await query(first.url, "SELECT current_database() AS name")).toEqual([{ name: "tessera" }]);
      await query(first.url, "CREATE TABLE kept AS SELECT 42 AS answer");
    } finally {
      await first.stop();
    }
    const again = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations] });
    try {
      expect(await query(again.url, "SELECT answer FROM kept")).toEqual([{ answer: 42 }]);
    } finally {
      await again.stop();
    }
  });

  it("converts an earlier version's PGlite data once, and keeps its folder renamed", async () => {
    const home = join(parent, "upgraded");
    await earlierVersionData(home, ["written by the PGlite version", "and another"]);

    const first = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations] });
    try {
      expect(first.conversion?.tables).toEqual([
        { name: "drizzle.fixture_migrations", rows: 2 },
        { name: "fixture.counters", rows: 0 },
        { name: "fixture.notes", rows: 2 },
      ]);
      expect(await query(first.url, "SELECT id, title FROM fixture.notes ORDER BY id")).toEqual([
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
      expect(await query(again.url, "SELECT count(*)::int AS n FROM fixture.notes")).toEqual([{ n: 2 }]);
    } finally {
      await again.stop();
    }
  });

  it("never converts over a database that already holds its own data", async () => {
    const home = join(parent, "both");
    const running = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations] });
    await running.stop();
    const other = join(parent, "other");
    await earlierVersionData(other, ["elsewhere"]);
    await mkdir(join(home, "pglite"));
    await cp(join(other, "pglite"), join(home, "pglite"), { recursive: true });

    await expect(startEmbeddedDatabase({ home, migrations: [fixtureMigrations] })).rejects.toThrow(
      `${join(home, "pglite")} holds data of an earlier Tessera (PGlite), but the database "tessera" of the PostgreSQL server beside it already has its own: move one of the two folders away and start again.`,
    );
    // The refusal stopped the server it had started: the next start is not refused as "already running".
    await rm(join(home, "pglite"), { recursive: true });
    const after = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations] });
    await after.stop();
  });
});
