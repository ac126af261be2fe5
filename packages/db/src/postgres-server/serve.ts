// The embedded database of `npm start` as a process of its own:
//
//   node --import tsx packages/db/src/postgres-server/serve.ts --home ./data \
//     --migrations signon=packages/signon/migrations --migrations completion=packages/completion/migrations
//
// Starts the PostgreSQL server (startEmbeddedDatabase), writes one JSON line
// to stdout, {"url": …, "conversion": {tables, keptAt} | null}, and keeps it
// running until SIGTERM or until its standard input ends (the process that
// started it has gone, even by kill -9): then a fast, clean shutdown and exit
// 0. When its launcher has gone, it first waits (up to 15 s) for the other
// clients to disconnect: the services stop by themselves then too, and the
// database stays until they have. A start that fails prints one sentence on
// stderr and exits 1.
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import pg from "pg";
import type { Logger } from "../logger.js";
import type { MigrationSet } from "../migrations.js";
import { startEmbeddedDatabase } from "./embedded-database.js";

const log: Logger = {
  info: (message) => process.stderr.write(`${message}\n`),
  warn: (message) => process.stderr.write(`${message}\n`),
};

const { values } = parseArgs({
  options: { home: { type: "string", default: "./data" }, migrations: { type: "string", multiple: true, default: [] } },
});
const migrations: MigrationSet[] = (values.migrations ?? []).map((pair) => {
  const [schema, folder] = pair.split("=", 2);
  if (!schema || !folder) throw new Error(`--migrations takes <schema>=<folder>, not ${pair}`);
  return { schema, folder: path.resolve(folder) };
});

let database;
try {
  database = await startEmbeddedDatabase({ home: values.home ?? "./data", migrations, log });
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

const running = database;
let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await running.stop();
  process.exit(0);
}

/** How long a launcher's end waits for the other clients to disconnect. */
const CLIENTS_WAIT_MS = 15_000;

/** Stops once no other client is connected, or after {@link CLIENTS_WAIT_MS}. */
async function stopAfterClients(): Promise<void> {
  if (stopping) return;
  // Nobody reads the output any more.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
  const deadline = Date.now() + CLIENTS_WAIT_MS;
  while (!stopping && Date.now() < deadline && (await otherClients()) > 0) await sleep(200);
  await stop();
}

async function otherClients(): Promise<number> {
  const client = new pg.Client({ connectionString: running.url });
  try {
    await client.connect();
    const result = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
    );
    return result.rows[0]?.n ?? 0;
  } catch {
    return 0;
  } finally {
    await client.end().catch(() => undefined);
  }
}

process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
process.stdin.on("end", () => void stopAfterClients());
process.stdin.on("error", () => void stopAfterClients());
process.stdin.resume();
void running.server.exited.then(() => {
  if (stopping) return;
  process.stderr.write(`the PostgreSQL server stopped by itself (see ${running.server.logFile})\n`);
  process.exit(1);
});

process.stdout.write(`${JSON.stringify({ url: running.url, conversion: running.conversion ?? null })}\n`);
