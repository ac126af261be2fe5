import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startPostgresServer, type PostgresServerOptions } from "../postgres-server/postgres-server.js";
import { testLogger } from "./test-logger.js";

/** An embedded PostgreSQL server for tests, in a temporary folder of its own. */
export interface TestServer {
  /** Connection string of its `postgres` database, as the superuser. */
  readonly url: string;
  /** Stops the server and deletes its folder. */
  stop(): Promise<void>;
}

/**
 * Throw-away settings: nothing is flushed to disk (a crash of the machine
 * loses the cluster, which a test run does not mind), and room for the pools
 * of every test file running at once.
 */
const TEST_SETTINGS = {
  fsync: "off",
  synchronous_commit: "off",
  full_page_writes: "off",
  max_connections: "300",
};

/**
 * Starts an embedded PostgreSQL server on a new cluster in a temporary
 * folder (initdb without flushes: about a second). `binaries` and
 * `binaryCache` as for `startPostgresServer`.
 */
export async function startTestServer(options: Pick<PostgresServerOptions, "binaries" | "binaryCache"> = {}): Promise<TestServer> {
  const home = await mkdtemp(path.join(tmpdir(), "tessera-test-pg-"));
  // Run by root, the server runs as the account "postgres", which must be let through.
  await chmod(home, 0o711);
  try {
    const server = await startPostgresServer({
      dataDir: path.join(home, "postgres"),
      durable: false,
      settings: TEST_SETTINGS,
      log: testLogger,
      ...options,
    });
    return {
      url: server.url,
      stop: async () => {
        try {
          await server.stop();
        } finally {
          await rm(home, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    await rm(home, { recursive: true, force: true });
    throw error;
  }
}
