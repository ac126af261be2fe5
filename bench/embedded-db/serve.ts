// One side of bench/embedded-db in a process of its own: Sign-on on the
// embedded PostgreSQL server (started here, in a temporary folder) or on the
// outside PostgreSQL server. Started by run.ts through fork(); sends its URL
// and an access token, then waits for "stop".
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedDatabase } from "@tessera/db";
import { startSignonOnPostgres } from "../signon/signon-server.js";

/** What a side hands to the load generator. */
export interface Prepared {
  url: string;
  accessToken: string;
  postgres: string;
}

const side = process.argv[2];
const outsideUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";

let serverUrl: string;
let stopServer: () => Promise<void> = async () => undefined;
let postgres: string;
if (side === "embedded") {
  const home = await mkdtemp(join(tmpdir(), "tessera-bench-embedded-"));
  // Run by root, the server runs as the account "postgres", which must be let through.
  await chmod(home, 0o711);
  const embedded = await startEmbeddedDatabase({ home: join(home, "data"), migrations: [] });
  serverUrl = embedded.server.url;
  postgres = "embedded PostgreSQL (Unix socket)";
  stopServer = async () => {
    await embedded.stop();
    await rm(home, { recursive: true, force: true });
  };
} else if (side === "outside") {
  serverUrl = outsideUrl;
  postgres = `outside PostgreSQL (${new URL(outsideUrl).host})`;
} else {
  throw new Error(`unknown side ${String(side)}`);
}

const signon = await startSignonOnPostgres(serverUrl);
const prepared: Prepared = { url: signon.url, accessToken: await signon.issueAccessToken(), postgres };
await signon.settle();

process.send?.(prepared);
process.on("message", (message) => {
  if (message !== "stop") return;
  signon
    .close()
    .then(stopServer)
    .then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
});
