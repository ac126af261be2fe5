import { chmod, cp, lstat, mkdir, mkdtemp, readdir, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresServerError, startEmbeddedDatabase } from "../src/index.js";
import { binariesIn, postgresBinaries, type PostgresBinaries } from "../src/postgres-server/binaries.js";
import { startTestServer } from "../src/testing/test-server.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import { queryOnce } from "./support/query-once.js";

// A checkout under /root, as root: the binaries sit in a folder that the account "postgres" cannot enter.
const isRoot = process.getuid?.() === 0;
if (!isRoot) console.info("root-only-binaries.test.ts: skipped, it needs root (a root process runs PostgreSQL as the account \"postgres\")");

let closed: string;
let open: string;
let cache: string;
let binaries: PostgresBinaries;

beforeAll(async () => {
  if (!isRoot) return;
  closed = await mkdtemp(path.join(tmpdir(), "tessera-root-only-"));
  await chmod(closed, 0o700);
  const installed = await postgresBinaries();
  const native = path.join(closed, "native");
  for (const folder of ["bin", "lib", "share"]) {
    await cp(path.join(installed.native, folder), path.join(native, folder), { recursive: true, verbatimSymlinks: true });
  }
  binaries = binariesIn(installed, native);
  // Where servers' folders go, and the cache that this test's copy goes to (not the machine's own).
  open = await mkdtemp(path.join(tmpdir(), "tessera-root-only-open-"));
  await chmod(open, 0o711);
  cache = path.join(open, "cache");
});

afterAll(async () => {
  if (!isRoot) return;
  await rm(closed, { recursive: true, force: true });
  await rm(open, { recursive: true, force: true });
});

/** The program a process runs (Linux). */
function programOf(pid: number): Promise<string> {
  return readlink(`/proc/${pid}/exe`);
}

describe.runIf(isRoot)("as root, with the PostgreSQL programs in a folder only root can enter", () => {
  it("the test suites' server runs from a root-owned copy in the cache, made once", async () => {
    const server = await startTestServer({ binaries, binaryCache: cache });
    try {
      expect(await queryOnce(server.url, "SELECT current_user AS name")).toEqual([{ name: "postgres" }]);
    } finally {
      await server.stop();
    }
    const entries = await readdir(cache);
    expect(entries).toEqual([`postgres-${binaries.release}`]);
    const copy = path.join(cache, `postgres-${binaries.release}`);
    for (const folder of [copy, path.join(copy, "bin"), path.join(copy, "lib")]) {
      const { uid, mode } = await lstat(folder);
      expect({ folder, uid, mode: mode & 0o777 }).toEqual({ folder, uid: 0, mode: 0o755 });
    }
    expect((await lstat(path.join(copy, "bin", "postgres"))).mode & 0o777).toBe(0o755);
    expect((await lstat(closed)).mode & 0o777).toBe(0o700);
  });

  it("npm start's database runs from the same copy, and says nothing more about it", async () => {
    const notes: string[] = [];
    const log = { info: (message: string) => notes.push(message), warn: (message: string) => notes.push(message) };
    const database = await startEmbeddedDatabase({ home: path.join(open, "data"), migrations: [fixtureMigrations], binaries, binaryCache: cache, log });
    try {
      expect(await queryOnce(database.url, "SELECT current_database() AS name")).toEqual([{ name: "tessera" }]);
      expect(await programOf(database.server.pid)).toBe(path.join(cache, `postgres-${binaries.release}`, "bin", "postgres"));
    } finally {
      await database.stop();
    }
    expect(notes.filter((note) => note.includes("copied"))).toEqual([]);
    expect(await readdir(cache)).toEqual([`postgres-${binaries.release}`]);
  });

  it("a first start says where it copied the programs, and why", async () => {
    const notes: string[] = [];
    const log = { info: (message: string) => notes.push(message), warn: (message: string) => notes.push(message) };
    const otherCache = path.join(open, "other-cache");
    const database = await startEmbeddedDatabase({ home: path.join(open, "data"), migrations: [fixtureMigrations], binaries, binaryCache: otherCache, log });
    await database.stop();
    expect(notes).toContainEqual(
      `database: the account "postgres" that runs PostgreSQL cannot run the programs in ${binaries.native}; copied them to ${path.join(otherCache, `postgres-${binaries.release}`)} and runs them from there`,
    );
  });

  it("npm start's data directory in that folder is refused with one sentence naming the way out", async () => {
    // A checkout as git makes it (mode 0755), in the folder only root can enter.
    const checkout = path.join(closed, "checkout");
    await mkdir(checkout, { mode: 0o755 });
    await chmod(checkout, 0o755);
    const home = path.join(checkout, "data");
    const error: unknown = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations], binaries, binaryCache: cache }).then(
      async (database) => {
        await database.stop();
        throw new Error("the database started");
      },
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(PostgresServerError);
    expect((error as PostgresServerError).problem).toBe("unreachable-directory");
    expect((error as PostgresServerError).message).toBe(
      `PostgreSQL runs as the account "postgres" (it does not run as root) and cannot enter ${closed}: ` +
        `move ${path.join(home, "postgres")} to a folder that account can enter (npm start keeps it in ./data of the checkout: move the checkout out of ${closed}, e.g. to /srv/tessera), ` +
        "or set DATABASE_URL to a PostgreSQL server (version 15 or later).",
    );
  });

  it("refuses a cache entry that another account could have written", async () => {
    const unsafe = path.join(open, "unsafe-cache");
    await mkdir(path.join(unsafe, `postgres-${binaries.release}`), { recursive: true });
    await chmod(path.join(unsafe, `postgres-${binaries.release}`), 0o777);
    const error: unknown = await startTestServer({ binaries, binaryCache: unsafe }).then(
      async (server) => {
        await server.stop();
        throw new Error("the server started");
      },
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(PostgresServerError);
    expect((error as PostgresServerError).problem).toBe("unreachable-binaries");
    expect((error as PostgresServerError).message).toMatch(/^PostgreSQL runs as the account "postgres" \(it does not run as root\), which cannot run the programs in .*: /);
  });
});
