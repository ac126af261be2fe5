import { Worker } from "node:worker_threads";
import { silentLogger, type Logger } from "../logger.js";

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
  /** Where failures inside the server, stalls and an unexpected stop are reported. */
  log?: Logger;
  /**
   * Warn when one connection has kept the session this long without sending
   * anything while other connections wait (default 10 000 ms).
   */
  stallWarningMs?: number;
}

type WorkerReport =
  | { type: "ready"; port: number }
  | { type: "failed"; error: string }
  | { type: "warning"; error: string }
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
 * directory; `openEmbeddedDatabase` guards against that with a lock file.
 */
export async function startEmbeddedServer(options: EmbeddedServerOptions = {}): Promise<EmbeddedServer> {
  const dataDir = options.dataDir ?? IN_MEMORY;
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? silentLogger;
  const worker = new Worker(new URL("./server-worker.mjs", import.meta.url), {
    workerData: { dataDir, host, port: options.port ?? 0, stallWarningMs: options.stallWarningMs },
  });

  let closeRequested = false;
  let onStarted: (report: WorkerReport) => void = () => {};
  let onClosed: (report: WorkerReport) => void = () => {};
  const started = new Promise<WorkerReport>((resolve) => (onStarted = resolve));
  const closed = new Promise<WorkerReport>((resolve) => (onClosed = resolve));

  worker.on("message", (report: WorkerReport) => {
    if (report.type === "warning") log.warn(`embedded database: ${report.error}`);
    else if (report.type === "closed" || report.type === "close-failed") onClosed(report);
    else onStarted(report);
  });
  // Without a listener, an error thrown in the worker would end this process.
  worker.on("error", (error) => {
    const report: WorkerReport = { type: "failed", error: error.stack ?? error.message };
    onStarted(report);
    if (!closeRequested) log.warn(`embedded database: the server failed: ${report.error}`);
  });
  worker.once("exit", (code) => {
    const error = `the worker ended with exit code ${code}`;
    onStarted({ type: "failed", error });
    onClosed({ type: "close-failed", error });
    if (!closeRequested) log.warn(`embedded database: the server stopped unexpectedly (${error}); connections will fail`);
  });

  const ready = await started;
  if (ready.type !== "ready") {
    closeRequested = true;
    await worker.terminate();
    throw new Error(`the embedded database could not start: ${"error" in ready ? ready.error : ready.type}`);
  }

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    closeRequested = true;
    worker.postMessage({ type: "close" });
    const answer = await closed;
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
