import { chmod, chown, mkdir, mkdtemp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { removeDataFolder } from "../src/testing/index.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PostgresServerError, startPostgresServer, type PostgresServer } from "../src/index.js";
import { queryOnce } from "./support/query-once.js";

const isRoot = process.getuid?.() === 0;
let parent: string;
const running: PostgresServer[] = [];

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "tessera-pg-"));
  // Run by root, the server runs as the account "postgres", which must be let through.
  await chmod(parent, 0o711);
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()));
});

afterAll(async () => {
  await removeDataFolder(parent);
});

/** A fresh data directory path, in its own folder (which takes the socket). */
let count = 0;
function newDataDir(): string {
  count += 1;
  return join(parent, `home-${count}`, "postgres");
}

async function start(dataDir: string, options: { transport?: "socket" | "tcp" } = {}): Promise<PostgresServer> {
  const server = await startPostgresServer({ dataDir, durable: false, ...options });
  running.push(server);
  return server;
}

async function startFailure(dataDir: string): Promise<PostgresServerError> {
  const error: unknown = await startPostgresServer({ dataDir, durable: false }).then(
    (server) => {
      running.push(server);
      throw new Error("the server started");
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(PostgresServerError);
  return error as PostgresServerError;
}

/** The postmaster and every process it started (Linux: read from /proc). */
async function serverProcesses(postmaster: number): Promise<number[]> {
  const pids = [postmaster];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // Fields after the command name in parentheses: state, ppid, …
    const ppid = Number(status.slice(status.lastIndexOf(")") + 2).split(" ")[1]);
    if (ppid === postmaster) pids.push(Number(entry));
  }
  return pids;
}

describe("startPostgresServer", () => {
  it("creates a cluster, serves it on a Unix socket in a private folder with no TCP port, and stops cleanly", async () => {
    const dataDir = newDataDir();
    const server = await start(dataDir);
    expect(server.created).toBe(true);
    expect(server.transport).toBe("socket");
    expect(server.url).toMatch(/^postgres:\/\/postgres@localhost:5432\/postgres\?host=%2F/);
    const [row] = await queryOnce<{ user: string; port: number | null; version: string }>(
      server.url,
      "select current_user as user, inet_server_port() as port, current_setting('server_version_num') as version",
    );
    expect(row).toEqual({ user: "postgres", port: null, version: expect.stringMatching(/^18\d{4}$/) });
    expect((await stat(join(dataDir, ".."))).mode & 0o777).toBe(0o700);
    await queryOnce(server.url, "create table kept (id int)");

    await server.stop();
    const logBefore = (await readFile(server.logFile, "utf8")).length;
    const again = await start(dataDir);
    expect(again.created).toBe(false);
    const thisStart = (await readFile(again.logFile, "utf8")).slice(logBefore);
    expect(thisStart).toMatch(/database system was shut down at/);
    expect(thisStart).not.toMatch(/not properly shut down|automatic recovery/);
    expect(await queryOnce(again.urlOf("postgres"), "select count(*)::int as n from kept")).toEqual([{ n: 0 }]);
  });

  it("refuses a second start on the same data directory while the first runs", async () => {
    const dataDir = newDataDir();
    const first = await start(dataDir);
    const error = await startFailure(dataDir);
    expect(error.problem).toBe("already-running");
    expect(error.message).toMatch(/^Tessera is already running there: a PostgreSQL server \(pid \d+\) uses /);
    expect(await queryOnce(first.url, "select 1 as one")).toEqual([{ one: 1 }]);
  });

  it.runIf(process.platform === "linux")("recovers every committed row after the server's processes are killed (kill -9)", async () => {
    const dataDir = newDataDir();
    const server = await start(dataDir);
    await queryOnce(server.url, "create table acknowledged (id int primary key)");
    await queryOnce(server.url, "insert into acknowledged select generate_series(1, 1000)");
    const idle = new pg.Client({ connectionString: server.url });
    await idle.connect();
    idle.on("error", () => {}); // Its server is about to vanish.
    await idle.query("begin; insert into acknowledged values (5000)"); // Never committed.

    for (const pid of await serverProcesses(server.pid)) process.kill(pid, "SIGKILL");
    await server.exited;
    running.splice(running.indexOf(server), 1);
    await idle.end().catch(() => {});

    const logBefore = (await readFile(server.logFile, "utf8")).length;
    const recovered = await start(dataDir);
    expect((await readFile(recovered.logFile, "utf8")).slice(logBefore)).toMatch(/not properly shut down; automatic recovery in progress/);
    expect(await queryOnce(recovered.url, "select count(*)::int as n, max(id) as last from acknowledged")).toEqual([{ n: 1000, last: 1000 }]);
  });

  it("serves 127.0.0.1 with the superuser's password (kept in a 0600 file) where sockets are not used", async () => {
    const dataDir = newDataDir();
    const server = await start(dataDir, { transport: "tcp" });
    const url = new URL(server.url);
    expect(url.hostname).toBe("127.0.0.1");
    const passwordFile = join(dataDir, "..", "postgres-password");
    expect(decodeURIComponent(url.password)).toBe((await readFile(passwordFile, "utf8")).trim());
    expect((await stat(passwordFile)).mode & 0o777).toBe(0o600);
    expect(await queryOnce(server.url, "select inet_server_addr()::text as address")).toEqual([{ address: "127.0.0.1/32" }]);

    url.password = "wrong";
    await expect(queryOnce(url.toString(), "select 1")).rejects.toThrow(/password authentication failed for user "postgres"/);
  });

  it("refuses a folder with files that is not a cluster", async () => {
    const dataDir = newDataDir();
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await writeFile(join(dataDir, "notes.txt"), "mine");
    const error = await startFailure(dataDir);
    expect(error.problem).toBe("not-a-data-directory");
    expect(error.message).toBe(
      `${dataDir} is not a PostgreSQL data directory (it has files but no PG_VERSION): move it away, or pass another data directory, or set DATABASE_URL to a PostgreSQL server (version 15 or later).`,
    );
  });

  it("refuses a cluster of another PostgreSQL major version", async () => {
    const dataDir = newDataDir();
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await writeFile(join(dataDir, "PG_VERSION"), "15\n");
    const error = await startFailure(dataDir);
    expect(error.problem).toBe("other-version");
    expect(error.message).toMatch(/was written by PostgreSQL 15 and the embedded server is PostgreSQL 18: /);
  });

  it.runIf(isRoot)("refuses a data directory that belongs to another account", async () => {
    const dataDir = newDataDir();
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await writeFile(join(dataDir, "PG_VERSION"), "18\n");
    await chown(dataDir, 54321, 54321);
    const error = await startFailure(dataDir);
    expect(error.problem).toBe("wrong-owner");
    expect(error.message).toMatch(/belongs to another account \(uid 54321\), not to the account "postgres" that runs PostgreSQL here: /);
  });

  it.runIf(isRoot)("as root, says when the server's account cannot reach the folder", async () => {
    const closed = join(parent, "closed");
    await mkdir(closed, { mode: 0o700 });
    await chmod(closed, 0o700);
    const error = await startFailure(join(closed, "home", "postgres"));
    expect(error.problem).toBe("unreachable-directory");
    expect(error.message).toMatch(/^PostgreSQL runs as the account "postgres" \(it does not run as root\) and cannot enter .*closed: /);
  });
});
