import { execFile } from "node:child_process";
import { chmod, chown, mkdir, readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { PostgresServerError, USE_DATABASE_URL } from "./postgres-server-error.js";
import type { ServerUser } from "./server-user.js";

const run = promisify(execFile);

/** What is found at a data directory before the server starts. */
export type DataDirectoryState = "missing" | "empty" | "cluster";

/**
 * Makes the folder that holds the data directory (and the socket) private to
 * the server's account (mode 0700), and says whether the data directory holds
 * a cluster already.
 *
 * @throws {PostgresServerError} when the directories belong to another
 *   account, cannot be reached by the server's account, hold something else,
 *   or a cluster of another PostgreSQL major version.
 */
export async function prepareDataDirectory(dataDir: string, user: ServerUser, postgresPath: string): Promise<DataDirectoryState> {
  const home = path.dirname(dataDir);
  await mkdir(home, { recursive: true, mode: 0o700 });
  // Root created the folder (or an earlier root start did): it is handed to the server's account.
  await checkOwner(home, user, user.switched);
  if (user.switched) {
    await chown(home, user.uid, user.gid);
    await checkReachable(home, dataDir, user);
  }
  if (process.platform !== "win32") await chmod(home, 0o700);

  let entries: string[];
  try {
    entries = await readdir(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw error;
  }
  if (entries.length === 0) {
    await checkOwner(dataDir, user, user.switched);
    if (user.switched) await chown(dataDir, user.uid, user.gid);
    return "empty";
  }
  if (!entries.includes("PG_VERSION")) {
    throw new PostgresServerError(
      "not-a-data-directory",
      `${dataDir} is not a PostgreSQL data directory (it has files but no PG_VERSION): move it away, or pass another data directory, ${USE_DATABASE_URL}.`,
    );
  }
  const clusterMajor = (await readFile(path.join(dataDir, "PG_VERSION"), "utf8")).trim();
  const serverMajor = await majorVersion(postgresPath);
  if (clusterMajor !== serverMajor) {
    throw new PostgresServerError(
      "other-version",
      `${dataDir} was written by PostgreSQL ${clusterMajor} and the embedded server is PostgreSQL ${serverMajor}: dump it with PostgreSQL ${clusterMajor}'s pg_dump and restore it, ${USE_DATABASE_URL}.`,
    );
  }
  await checkOwner(dataDir, user, false);
  return "cluster";
}

/** The major version of a `postgres` binary ("18"). */
export async function majorVersion(postgresPath: string): Promise<string> {
  const { stdout } = await run(postgresPath, ["--version"]);
  const match = /\(PostgreSQL\) (\d+)/.exec(stdout);
  if (!match?.[1]) throw new Error(`unexpected output of postgres --version: ${stdout.trim()}`);
  return match[1];
}

async function checkOwner(dir: string, user: ServerUser, rootMayOwn: boolean): Promise<void> {
  if (process.platform === "win32") return;
  const { uid } = await stat(dir);
  if (uid === user.uid || (rootMayOwn && uid === 0)) return;
  const account = user.switched ? `the account "${user.name}" that runs PostgreSQL here` : "you";
  throw new PostgresServerError(
    "wrong-owner",
    `${dir} belongs to another account (uid ${uid}), not to ${account}: start Tessera as its owner, or pass another data directory, ${USE_DATABASE_URL}.`,
  );
}

/** Every folder above `dir` must let the server's account through (x permission). */
async function checkReachable(dir: string, dataDir: string, user: ServerUser): Promise<void> {
  for (let current = path.dirname(dir); ; current = path.dirname(current)) {
    const { uid, gid, mode } = await stat(current);
    const passes = (uid === user.uid && mode & 0o100) || (gid === user.gid && mode & 0o010) || mode & 0o001;
    if (!passes) {
      throw new PostgresServerError(
        "unreachable-directory",
        `PostgreSQL runs as the account "${user.name}" (it does not run as root) and cannot enter ${current}: move ${dataDir} to a folder that account can enter (npm start keeps it in ./data of the checkout: move the checkout out of ${current}, e.g. to /srv/tessera), ${USE_DATABASE_URL}.`,
      );
    }
    if (current === path.dirname(current)) return;
  }
}
