// A MariaDB server of the test's own (Debian's mariadb-server), in a temporary folder on a free port, for the tests
// that read a GOV.UK Signon database: started as the failover tests start PostgreSQL, thrown away at the end.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@tessera/db/testing";
import mysql from "mysql2/promise";

const server = "/usr/sbin/mariadbd";
const installDb = "/usr/bin/mariadb-install-db";

/** What this machine lacks to run MariaDB, or null. */
export function mariadbUnavailable(): string | null {
  return existsSync(server) && existsSync(installDb) ? null : "MariaDB is not installed (apt-get install mariadb-server)";
}

export interface MariadbServer {
  /** mysql://… of `database` as a user with every right on it. */
  url(database: string): string;
  /** Runs SQL (several statements allowed) in `database`. */
  run(database: string, statements: string, values?: unknown[]): Promise<void>;
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

const password = "signon-import-test";

export async function startMariadb(): Promise<MariadbServer> {
  const directory = mkdtempSync(join(tmpdir(), "tessera-mariadb-"));
  const dataDir = join(directory, "data");
  const socket = join(directory, "mysqld.sock");
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? ["--user=root"] : [];
  execFileSync(installDb, ["--no-defaults", `--datadir=${dataDir}`, "--auth-root-authentication-method=normal", "--skip-test-db", ...user], { stdio: "pipe" });
  const port = await freePort();
  const log = join(directory, "mariadb.log");
  const child: ChildProcess = spawn(
    server,
    ["--no-defaults", `--datadir=${dataDir}`, `--socket=${socket}`, `--port=${port}`, "--bind-address=127.0.0.1", `--log-error=${log}`, "--skip-log-bin", "--innodb-buffer-pool-size=256M", ...user],
    { stdio: "ignore" },
  );
  let exited = false;
  child.once("exit", () => (exited = true));
  const deadline = Date.now() + 30_000;
  let admin: mysql.Connection | null = null;
  while (admin === null) {
    if (exited) throw new Error(`MariaDB exited as it started:\n${existsSync(log) ? readFileSync(log, "utf8").slice(-3000) : ""}`);
    admin = await mysql.createConnection({ socketPath: socket, user: "root", multipleStatements: true }).catch(() => null);
    if (admin === null) {
      if (Date.now() > deadline) throw new Error(`MariaDB did not answer within 30 s:\n${existsSync(log) ? readFileSync(log, "utf8").slice(-3000) : ""}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await admin.query(`CREATE USER 'signon'@'127.0.0.1' IDENTIFIED BY '${password}'; GRANT ALL ON *.* TO 'signon'@'127.0.0.1'`);
  const url = (database: string) => `mysql://signon:${password}@127.0.0.1:${port}/${database}`;
  return {
    url,
    async run(database, statements, values = []) {
      const connection = await mysql.createConnection({ uri: url(database), multipleStatements: true, timezone: "Z" });
      try {
        await connection.query(statements, values);
      } finally {
        await connection.end();
      }
    },
    async createDatabase(name) {
      await admin!.query(`DROP DATABASE IF EXISTS \`${name}\`; CREATE DATABASE \`${name}\` CHARACTER SET utf8mb3`);
      return url(name);
    },
    async stop() {
      await admin!.end().catch(() => undefined);
      if (!exited) {
        const gone = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 10_000))]);
        if (!exited) child.kill("SIGKILL");
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
