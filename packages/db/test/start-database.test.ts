import { execFile } from "node:child_process";
import { chmod, mkdtemp, readFile } from "node:fs/promises";
import { removeDataFolder } from "../src/testing/index.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDatabase, startEmbeddedDatabase, type Logger } from "../src/index.js";
import { runningServer } from "../src/postgres-server/running-server.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import * as schema from "./fixtures/schema.js";

let parent: string;
let home: string;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "tessera-db-"));
  // Run by root, the server runs as the account "postgres", which must be let through.
  await chmod(parent, 0o711);
  home = join(parent, "data");
});

afterAll(async () => {
  await removeDataFolder(parent);
});

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (message) => lines.push(message), warn: (message) => lines.push(message) };
}

describe("startDatabase", () => {
  it("starts the embedded PostgreSQL server of the data folder when no url is given, migrates, and stops it at close", async () => {
    const log = recordingLogger();
    const database = await startDatabase({ dataDir: home, log, migrations: [fixtureMigrations], schema });
    try {
      expect(database.url).toBe(`postgres://postgres@localhost:5432/tessera?host=${encodeURIComponent(home)}`);
      expect(log.lines).toContain(`database: DATABASE_URL is not set, so the embedded PostgreSQL server on ${join(home, "postgres")} was started for this process`);
      expect(log.lines).toContain("database: applied 2 migration(s) to schema fixture");
      await database.db.insert(schema.notes).values({ title: "written before a restart" });
      expect(await runningServer(join(home, "postgres"))).toBeDefined();
    } finally {
      await database.close();
    }
    expect(await runningServer(join(home, "postgres"))).toBeUndefined();
    expect(await readFile(join(home, "postgres.log"), "utf8")).toMatch(/database system is shut down\n$/);
  });

  it("keeps the data across a restart", async () => {
    const database = await startDatabase({ dataDir: home, migrations: [fixtureMigrations], schema });
    try {
      const notes = await database.db.select({ title: schema.notes.title }).from(schema.notes);
      expect(notes).toEqual([{ title: "written before a restart" }]);
    } finally {
      await database.close();
    }
  });

  it("uses the server running on the data folder, in this process and in another, and leaves it running", async () => {
    const running = await startEmbeddedDatabase({ home, migrations: [] });
    try {
      const log = recordingLogger();
      const database = await startDatabase({ dataDir: home, log });
      expect(database.url).toBe(running.url);
      expect(log.lines).toEqual([`database: DATABASE_URL is not set, so the embedded PostgreSQL server running on ${join(home, "postgres")} is used`]);
      await database.close();

      const script = fileURLToPath(new URL("./fixtures/count-notes.ts", import.meta.url));
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script, home]);
      expect(JSON.parse(stdout)).toEqual({ url: running.url, notes: 1 });
      expect((await runningServer(join(home, "postgres")))?.host).toBe(home);
    } finally {
      await running.stop();
    }
  });

  it("keeps what was committed when the server is killed with SIGKILL: the next start recovers it", async () => {
    const database = await startDatabase({ dataDir: home });
    const postmaster = Number((await readFile(join(home, "postgres", "postmaster.pid"), "utf8")).split("\n")[0]);
    try {
      await database.pool.query("INSERT INTO fixture.notes (title) VALUES ('committed before the crash')");
      process.kill(postmaster, "SIGKILL");
    } finally {
      await database.close().catch(() => undefined);
    }
    const again = await startDatabase({ dataDir: home });
    try {
      const { rows } = await again.pool.query<{ title: string }>("SELECT title FROM fixture.notes ORDER BY id");
      expect(rows.map((row) => row.title)).toEqual(["written before a restart", "committed before the crash"]);
    } finally {
      await again.close();
    }
    expect(await readFile(join(home, "postgres.log"), "utf8")).toContain("database system was interrupted");
  });

  it("connects to the given url and starts nothing", async () => {
    const running = await startEmbeddedDatabase({ home, migrations: [] });
    const log = recordingLogger();
    try {
      const database = await startDatabase({ url: running.url, log });
      expect((await database.pool.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      expect(log.lines).toEqual([]);
      await database.close();
      expect(await runningServer(join(home, "postgres"))).toBeDefined();
    } finally {
      await running.stop();
    }
  });
});
