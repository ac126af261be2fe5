import { readFile } from "node:fs/promises";
import path from "node:path";
import { readPassword, SUPERUSER } from "./init-cluster.js";

/** How a client reaches a server: a Unix socket's folder, or 127.0.0.1 with the superuser's password. */
export interface ServerAddress {
  host: string;
  port: number;
  password: string | undefined;
}

/** Connection string of `database` on a server of this package, as the superuser. */
export function connectionUrl(address: ServerAddress, database: string): string {
  const db = encodeURIComponent(database);
  if (address.password === undefined) {
    // node-postgres and libpq take a socket folder as the `host` parameter.
    return `postgres://${SUPERUSER}@localhost:${address.port}/${db}?host=${encodeURIComponent(address.host)}`;
  }
  return `postgres://${SUPERUSER}:${encodeURIComponent(address.password)}@${address.host}:${address.port}/${db}`;
}

/**
 * The address of the server that runs on `dataDir` now (started by `npm start`
 * or by another command), read from its `postmaster.pid`; undefined when none
 * runs there or it is not ready yet.
 */
export async function runningServer(dataDir: string): Promise<ServerAddress | undefined> {
  let lines: string[];
  try {
    lines = (await readFile(path.join(dataDir, "postmaster.pid"), "utf8")).split("\n");
  } catch {
    return undefined;
  }
  // Line 1: the postmaster's pid; 4: its port; 5: its socket folder; 8: its state.
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || lines[7]?.trim() !== "ready" || !isRunning(pid)) return undefined;
  const socketDir = lines[4]?.trim() ?? "";
  if (socketDir !== "") return { host: socketDir, port, password: undefined };
  return { host: "127.0.0.1", port, password: await readPassword(dataDir) };
}

/** The pid of the postmaster that holds `dataDir` (ready or not), if one runs. */
export async function serverProcess(dataDir: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(path.join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 && isRunning(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists (one of another account's counts). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
