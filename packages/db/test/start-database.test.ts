import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fitConfigToDatabase, openEmbeddedDatabase, startDatabase, startEmbeddedServer, type Logger } from "../src/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import * as schema from "./fixtures/schema.js";

let parent: string;
let dataDir: string;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "tessera-db-"));
  dataDir = join(parent, "pglite");
});

afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (message) => lines.push(message), warn: (message) => lines.push(message) };
}

describe("startDatabase", () => {
  it("starts the embedded database when no url is given, says it is for one machine, and migrates", async () => {
    const log = recordingLogger();
    const database = await startDatabase({ dataDir, log, migrations: [fixtureMigrations], schema });
    try {
      expect(database.embedded).toBe(true);
      expect(database.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
      expect(log.lines.some((line) => line.includes("one machine only"))).toBe(true);
      expect(log.lines).toContain("database: applied 2 migration(s) to schema fixture");
      await database.db.insert(schema.notes).values({ title: "written before a restart" });
      expect(existsSync(`${dataDir}.lock`)).toBe(true);
    } finally {
      await database.close();
    }
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
  });

  it("keeps the data in the data directory across a restart", async () => {
    const database = await startDatabase({ dataDir, migrations: [fixtureMigrations], schema });
    try {
      const notes = await database.db.select({ title: schema.notes.title }).from(schema.notes);
      expect(notes).toEqual([{ title: "written before a restart" }]);
    } finally {
      await database.close();
    }
  });

  it("shares one embedded server among the services of one process", async () => {
    const signon = await startDatabase({ dataDir });
    const completion = await startDatabase({ dataDir });
    expect(completion.url).toBe(signon.url);
    await signon.close();
    // The server stays up for the service still using it.
    const { rows } = await completion.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM fixture.notes");
    expect(rows).toEqual([{ n: 1 }]);
    await completion.close();
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
  });

  it("opens a directory again while this process is still closing its last server on it", async () => {
    const first = await openEmbeddedDatabase({ dataDir });
    const closing = first.release();
    const second = await openEmbeddedDatabase({ dataDir });
    const pool = new pg.Pool({ connectionString: second.url });
    try {
      await closing;
      expect(second.url).not.toBe(first.url);
      const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM fixture.notes");
      expect(rows).toEqual([{ n: 1 }]);
    } finally {
      await pool.end();
      await second.release();
    }
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
  });

  it("lets another process use the running server instead of opening the data directory again", async () => {
    const database = await startDatabase({ dataDir });
    try {
      const script = fileURLToPath(new URL("./fixtures/count-notes.ts", import.meta.url));
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script, dataDir]);
      expect(JSON.parse(stdout)).toEqual({ url: database.url, embedded: true, notes: 1 });
      // The other process closing does not stop this process's server.
      expect((await database.pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await database.close();
    }
  });

  it("keeps what a process committed before it exited without closing, and takes over its lock", async () => {
    const script = fileURLToPath(new URL("./fixtures/write-and-exit.ts", import.meta.url));
    await promisify(execFile)(process.execPath, ["--import", "tsx", script, dataDir]);
    expect(existsSync(`${dataDir}.lock`)).toBe(true);
    const database = await startDatabase({ dataDir });
    try {
      const { rows } = await database.pool.query<{ title: string }>("SELECT title FROM fixture.notes ORDER BY id");
      expect(rows.map((row) => row.title)).toEqual(["written before a restart", "committed before the crash"]);
    } finally {
      await database.close();
    }
  });

  it("takes over the lock file of a process that no longer runs", async () => {
    await writeFile(`${dataDir}.lock`, JSON.stringify({ pid: 2 ** 22 + 12_345, url: null }));
    const database = await startDatabase({ dataDir });
    try {
      expect(database.embedded).toBe(true);
    } finally {
      await database.close();
    }
  });

  it("connects to the server of another live process instead of opening its data directory", async () => {
    const elsewhere = await startEmbeddedServer();
    const lockedDir = join(parent, "held-elsewhere");
    // The vitest main process stands in for the other process that serves the directory.
    await writeFile(`${lockedDir}.lock`, JSON.stringify({ pid: process.ppid, url: elsewhere.url }));
    try {
      const database = await startDatabase({ dataDir: lockedDir });
      expect(database.url).toBe(elsewhere.url);
      expect(database.embedded).toBe(true);
      await database.close();
      expect(existsSync(lockedDir)).toBe(false);
      expect(existsSync(`${lockedDir}.lock`)).toBe(true);
    } finally {
      await elsewhere.close();
    }
  });

  it("refuses a data directory held by a live process that does not answer", async () => {
    const lockedDir = join(parent, "held-silently");
    await writeFile(`${lockedDir}.lock`, JSON.stringify({ pid: process.ppid, url: "postgres://postgres@127.0.0.1:1/postgres" }));
    await expect(openEmbeddedDatabase({ dataDir: lockedDir, waitMs: 200 })).rejects.toThrow(
      `is held by process ${process.ppid}`,
    );
  });

  it("connects to the given url, starts nothing, and knows an embedded server behind it", async () => {
    const server = await startEmbeddedServer();
    const log = recordingLogger();
    try {
      const database = await startDatabase({ url: server.url, log });
      expect(database.embedded).toBe(true);
      expect((await database.pool.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      expect(log.lines).toEqual([]);
      await database.close();
    } finally {
      await server.close();
    }
  });

  it.runIf(process.env["DATABASE_URL"])("reports a PostgreSQL server as not embedded", async () => {
    const database = await startDatabase({ url: process.env["DATABASE_URL"] });
    try {
      expect(database.embedded).toBe(false);
    } finally {
      await database.close();
    }
  });
});

describe("fitConfigToDatabase", () => {
  it("turns named prepared statements off on the embedded database and leaves everything else", () => {
    const config = { preparedStatements: true, port: 3000 };
    expect(fitConfigToDatabase(config, { embedded: true })).toEqual({ preparedStatements: false, port: 3000 });
    expect(fitConfigToDatabase(config, { embedded: false })).toBe(config);
    expect(config.preparedStatements).toBe(true);
  });
});
