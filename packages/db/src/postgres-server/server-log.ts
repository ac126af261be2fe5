import { open, stat } from "node:fs/promises";
import { PostgresServerError, USE_DATABASE_URL } from "./postgres-server-error.js";

/** The size of a log file, or 0 when it does not exist yet: where this start's lines begin. */
export async function logSize(logFile: string): Promise<number> {
  try {
    return (await stat(logFile)).size;
  } catch {
    return 0;
  }
}

/** What the server wrote to its log from byte `from` on. */
export async function readLogFrom(logFile: string, from: number): Promise<string> {
  const file = await open(logFile, "r");
  try {
    const { size } = await file.stat();
    const buffer = Buffer.alloc(Math.max(0, size - from));
    await file.read(buffer, 0, buffer.length, from);
    return buffer.toString("utf8");
  } finally {
    await file.close();
  }
}

/** Left behind by a killed server whose processes have not all exited yet: worth waiting for. */
export function isLeftoverSharedMemory(log: string): boolean {
  return log.includes("pre-existing shared memory block");
}

/**
 * Turns the log of a server that exited during start-up into one sentence.
 * `lc_messages` is C in every cluster this package creates, so the messages
 * are PostgreSQL's English ones.
 */
export function startFailure(log: string, dataDir: string, logFile: string): PostgresServerError {
  const fatal = log.split("\n").find((line) => line.includes("FATAL:"));
  if (/lock file "(postmaster\.pid|\.s\.PGSQL\.\d+\.lock)" already exists/.test(log)) {
    const pid = /PID (\d+)/.exec(log)?.[1];
    return new PostgresServerError(
      "already-running",
      `Tessera is already running there: a PostgreSQL server${pid ? ` (pid ${pid})` : ""} uses ${dataDir}; stop it first, or pass another data directory.`,
    );
  }
  if (/could not bind .* Address already in use/.test(log)) {
    return new PostgresServerError(
      "port-taken",
      `The embedded PostgreSQL server's port is taken by another program: free it, ${USE_DATABASE_URL}.`,
    );
  }
  if (/has wrong ownership|has invalid permissions/.test(log)) {
    return new PostgresServerError(
      "wrong-owner",
      `${dataDir} belongs to another account or is open to others: start Tessera as its owner (the folder must be mode 0700), ${USE_DATABASE_URL}.`,
    );
  }
  const detail = fatal?.replace(/^.*FATAL:\s*/, "") ?? "it exited without saying why";
  return new PostgresServerError(
    "failed",
    `The embedded PostgreSQL server did not start (${detail}; see ${logFile}), ${USE_DATABASE_URL}.`,
  );
}
