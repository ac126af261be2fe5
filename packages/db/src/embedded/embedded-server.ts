import { Worker } from "node:worker_threads";

/** A running embedded PostgreSQL server (PGlite in a worker thread). */
export interface EmbeddedServer {
  /** Connection string of the server, e.g. `postgres://postgres@127.0.0.1:41234/postgres`. */
  readonly url: string;
  /** The data directory, or `memory://` for a database that lives only in memory. */
  readonly dataDir: string;
  /** Stops accepting connections, rolls back open transactions, closes PGlite and ends the worker. */
  close(): Promise<void>;
}

/** Options of {@link startEmbeddedServer}. */
export interface EmbeddedServerOptions {
  /** A directory path, or `memory://` (the default) for an in-memory database. */
  dataDir?: string;
  /** Interface to bind; 127.0.0.1 unless told otherwise. */
  host?: string;
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
}

type WorkerReport =
  | { type: "ready"; port: number }
  | { type: "failed"; error: string }
  | { type: "closed" }
  | { type: "close-failed"; error: string };

/** The in-memory data directory of PGlite. */
export const IN_MEMORY = "memory://";

/**
 * Starts PGlite in a worker thread behind a PostgreSQL wire-protocol socket
 * server, so that any `pg` client can connect to it with a connection string.
 *
 * PGlite has one session: connections take turns, one transaction or one
 * protocol exchange at a time. Two servers must never open the same data
 * directory; {@link openEmbeddedDatabase} guards against that with a lock file.
 */
export async function startEmbeddedServer(options: EmbeddedServerOptions = {}): Promise<EmbeddedServer> {
  const dataDir = options.dataDir ?? IN_MEMORY;
  const host = options.host ?? "127.0.0.1";
  const worker = new Worker(new URL("./server-worker.mjs", import.meta.url), {
    workerData: { dataDir, host, port: options.port ?? 0 },
  });
  const exited = new Promise<number>((resolve) => worker.once("exit", resolve));

  const ready = await new Promise<WorkerReport>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
    void exited.then((code) => reject(new Error(`the embedded database worker exited with code ${code}`)));
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  if (ready.type !== "ready") {
    await worker.terminate();
    throw new Error(`the embedded database could not start: ${"error" in ready ? ready.error : ready.type}`);
  }

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    const report = new Promise<WorkerReport>((resolve) => worker.once("message", resolve));
    worker.postMessage({ type: "close" });
    const answer = await Promise.race([report, exited.then((code): WorkerReport => ({ type: "close-failed", error: `worker exited with code ${code}` }))]);
    await worker.terminate();
    if (answer.type !== "closed") {
      throw new Error(`the embedded database did not close cleanly: ${"error" in answer ? answer.error : answer.type}`);
    }
  };

  return {
    url: `postgres://postgres@${host}:${ready.port}/postgres`,
    dataDir,
    close: () => (closing ??= close()),
  };
}
