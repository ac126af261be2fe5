// What a drill's services stand on before the first one starts: a small pool of the test's own on their
// database, a folder for Sign-on's data, a receiver that answers every request 200 (the OAuth client's redirect
// URI, and the push base of the applications whose pushes nobody checks), and Sign-on's configuration for its
// command line on that database, which its instances take too.
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startSink } from "../load-support.js";

export interface ServiceWorkspace {
  /** A pool of the test's own on the services' database, for the set-up and the checks after the load. */
  pool: pg.Pool;
  /** Sign-on's SIGNON_DATA_DIR. */
  dataDir: string;
  /** Answers every request 200 with `{}`. */
  receiver: { server: Server; url: string };
  /** Sign-on's configuration for its command line on the services' database (`signonCli(cliEnv, …)`). */
  cliEnv: Record<string, string>;
  /** Closes the receiver and the pool and removes the data folder: once the services have stopped. */
  close(): Promise<void>;
}

/**
 * Opens the workspace of services on `databaseUrl`: the pool (two connections, `pool` added), a temporary data
 * folder named from `folderPrefix`, the receiver, and Sign-on's command-line configuration with `secretKey`.
 */
export async function openServiceWorkspace(databaseUrl: string, options: { folderPrefix: string; secretKey: string; pool?: pg.PoolConfig }): Promise<ServiceWorkspace> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2, ...options.pool });
  pool.on("error", () => {});
  const dataDir = mkdtempSync(join(tmpdir(), options.folderPrefix));
  const receiver = await startSink();
  const cliEnv = {
    NODE_ENV: "development",
    DATABASE_URL: databaseUrl,
    SIGNON_ARGON2_MEMORY_KIB: "64",
    SIGNON_ARGON2_TIME_COST: "1",
    SIGNON_SECRET_KEY: options.secretKey,
    SIGNON_DATA_DIR: dataDir,
    SIGNON_MAIL_PRINT: "false",
    // The load's superadmin works the permission grid without setting up 2-step verification.
    SIGNON_TWO_STEP_REQUIRED_ROLES: "none",
  };
  return {
    pool,
    dataDir,
    receiver,
    cliEnv,
    async close() {
      receiver.server.closeAllConnections();
      await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
      await pool.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
