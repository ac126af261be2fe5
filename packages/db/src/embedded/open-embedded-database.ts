import { mkdir } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { Logger } from "../logger.js";
import { IN_MEMORY, startEmbeddedServer } from "./embedded-server.js";
import { lockPathOf, processIsAlive, publishUrl, readLock, removeLockIf, tryCreateLock } from "./data-dir-lock.js";

/** Access to an embedded database server, started here or found running. */
export interface EmbeddedDatabase {
  /** Connection string of the server. */
  readonly url: string;
  /** Absolute data directory, or `memory://`. */
  readonly dataDir: string;
  /** Whether this process runs the server (`false`: another process does, and it is only used). */
  readonly servedHere: boolean;
  /** Gives up this handle; the last handle of this process stops a server it started. */
  release(): Promise<void>;
}

/** Options of {@link openEmbeddedDatabase}. */
export interface OpenEmbeddedOptions {
  /** Data directory, or `memory://` for a private in-memory database. */
  dataDir: string;
  /** How long to wait for another process's server that is still starting (default 30 s). */
  waitMs?: number;
  /** Where a server started here reports failures (the first caller's logger serves all). */
  log?: Logger;
}

interface SharedServer {
  url: string;
  servedHere: boolean;
  stop(): Promise<void>;
}

interface RegistryEntry {
  server: Promise<SharedServer>;
  users: number;
}

/** Servers of this process by absolute data directory. */
const registry = new Map<string, RegistryEntry>();

/** Servers of this process that are closing, by data directory: a new server waits for them. */
const stopping = new Map<string, Promise<void>>();

/**
 * Opens the embedded database of a data directory without ever opening the
 * directory twice:
 *
 * - in this process, every caller (Sign-on and Completion started by one
 *   `npm start`) shares one server, counted by handle;
 * - across processes, the server holds the lock file `<dataDir>.lock`, which
 *   names its process id and connection string; another process (a CLI run
 *   while the services run) connects to that server instead;
 * - a lock left by a process that no longer exists is removed.
 *
 * `memory://` always starts a new private server.
 */
export async function openEmbeddedDatabase(options: OpenEmbeddedOptions): Promise<EmbeddedDatabase> {
  if (options.dataDir === IN_MEMORY) {
    const server = await startEmbeddedServer({ dataDir: IN_MEMORY, ...logOption(options.log) });
    return { url: server.url, dataDir: IN_MEMORY, servedHere: true, release: () => server.close() };
  }
  const dataDir = resolve(options.dataDir);
  let entry = registry.get(dataDir);
  if (entry === undefined) {
    entry = { server: acquire(dataDir, options.waitMs ?? 30_000, options.log), users: 0 };
    registry.set(dataDir, entry);
  }
  const current = entry;
  current.users += 1;
  let server: SharedServer;
  try {
    server = await current.server;
  } catch (error) {
    current.users -= 1;
    if (registry.get(dataDir) === current) registry.delete(dataDir);
    throw error;
  }
  let released = false;
  return {
    url: server.url,
    dataDir,
    servedHere: server.servedHere,
    release: async () => {
      if (released) return;
      released = true;
      current.users -= 1;
      if (current.users > 0) return;
      if (registry.get(dataDir) === current) registry.delete(dataDir);
      const stop = server.stop();
      stopping.set(dataDir, stop);
      try {
        await stop;
      } finally {
        if (stopping.get(dataDir) === stop) stopping.delete(dataDir);
      }
    },
  };
}

function logOption(log: Logger | undefined): { log?: Logger } {
  return log === undefined ? {} : { log };
}

async function acquire(dataDir: string, waitMs: number, log: Logger | undefined): Promise<SharedServer> {
  const lockPath = lockPathOf(dataDir);
  // A server of this process that is still closing keeps the directory until it has.
  await stopping.get(dataDir)?.catch(() => {});
  await mkdir(dirname(dataDir), { recursive: true });
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (await tryCreateLock(lockPath)) return serve(dataDir, lockPath, log);
    const record = await readLock(lockPath);
    if (record !== null) {
      if (record.pid === process.pid || !processIsAlive(record.pid)) {
        // Left behind by a process that has ended (or by this one, which holds no server for it).
        await removeLockIf(lockPath, record);
        continue;
      }
      if (record.url !== null && (await answers(record.url))) {
        return { url: record.url, servedHere: false, stop: async () => {} };
      }
      if (Date.now() > deadline) {
        throw new Error(
          `the embedded database in ${dataDir} is held by process ${record.pid} (lock file ${lockPath}), ` +
            `which does not answer${record.url === null ? "" : ` on ${record.url}`}; ` +
            `stop that process, or delete the lock file if no such process runs`,
        );
      }
    }
    await sleep(100);
  }
}

async function serve(dataDir: string, lockPath: string, log: Logger | undefined): Promise<SharedServer> {
  let server;
  try {
    server = await startEmbeddedServer({ dataDir, ...logOption(log) });
    await publishUrl(lockPath, server.url);
  } catch (error) {
    await server?.close();
    await removeLockIf(lockPath, { pid: process.pid, url: server?.url ?? null });
    throw error;
  }
  const { url } = server;
  const started = server;
  return {
    url,
    servedHere: true,
    stop: async () => {
      try {
        await started.close();
      } finally {
        await removeLockIf(lockPath, { pid: process.pid, url });
      }
    },
  };
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000, query_timeout: 5000 });
  // A failing connection rejects connect() or the query below; the event must not end the process as well.
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
