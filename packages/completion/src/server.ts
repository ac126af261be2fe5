import { startDatabase } from "@tessera/db";
import { buildApp } from "./app.js";
import { startStaleWorker } from "./aggregation/stale-worker.js";
import { SignonCallerResolver } from "./auth/signon-caller-resolver.js";
import { ConfigError, readConfig, type CompletionConfig } from "./config.js";
import { createContext } from "./context.js";
import { COMPLETION_MIGRATIONS } from "./db/database.js";
import * as schema from "./db/schema.js";

let config: CompletionConfig;
try {
  config = readConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`completion: ${error.message}`);
  process.exit(2);
}

const database = await startDatabase({
  url: config.databaseUrl,
  migrations: [COMPLETION_MIGRATIONS],
  schema,
  log: { info: (message: string) => console.log(message), warn: (message: string) => console.warn(message) },
});
const ctx = createContext(config, database.db, new SignonCallerResolver({ signonUrl: config.signonUrl, cacheSeconds: config.callerCacheSeconds }));
const app = await buildApp(ctx, { logger: { level: process.env["LOG_LEVEL"] ?? "info" } });
const worker =
  config.staleWorkerIntervalMs > 0
    ? startStaleWorker(ctx, { intervalMs: config.staleWorkerIntervalMs, onError: (error) => app.log.error({ err: error }, "stale worker round failed") })
    : null;

let closing = false;
async function shutdown(signal: string): Promise<void> {
  if (closing) return;
  closing = true;
  app.log.info(`${signal}: closing`);
  await worker?.stop();
  await app.close();
  await database.close();
}
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    shutdown(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}

await app.listen({ host: config.host, port: config.port });
