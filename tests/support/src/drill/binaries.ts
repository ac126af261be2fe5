// Where the cluster's programs are: Debian's packages (patroni, etcd-server, haproxy, postgresql-15).
import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";

export const binaries = {
  patroni: "/usr/bin/patroni",
  /** Patroni's interpreter: the node's init runs on it too. */
  python: "/usr/bin/python3",
  etcd: "/usr/bin/etcd",
  haproxy: "/usr/sbin/haproxy",
  postgresBin: "/usr/lib/postgresql/15/bin",
  pgbackrest: "/usr/bin/pgbackrest",
} as const;

/** What `.ci/run` installs when one is missing. */
export const failoverPackages = "patroni etcd-server haproxy postgresql-15 pgbackrest";

/** Whether this machine can run the cluster: the programs exist. Returns what is missing when it cannot. */
export function failoverClusterUnavailable(): string | null {
  const missing = [binaries.patroni, binaries.python, binaries.etcd, binaries.haproxy, `${binaries.postgresBin}/postgres`, `${binaries.postgresBin}/pg_rewind`, binaries.pgbackrest].filter(
    (path) => !executable(path),
  );
  if (missing.length > 0) return `missing ${missing.join(", ")}`;
  if (process.getuid?.() === 0 && postgresUser() === null) return "running as root and there is no postgres user to run PostgreSQL as";
  return null;
}

/** The postgres user's ids, when there is one (Debian's postgresql-common creates it). */
export function postgresUser(): { uid: number; gid: number } | null {
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
  } catch {
    return null;
  }
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
