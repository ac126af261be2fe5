import { answerWhileStarting, drainAndClose } from "@tessera/service-kit";
import { buildApp } from "./app.js";
import { startStaleWorker } from "./aggregation/stale-worker.js";
import { SignonCallerResolver } from "./auth/signon-caller-resolver.js";
import { createContext } from "./context.js";
import { turnOffAllocationSitePretenuring } from "./garbage-collection.js";
import { openCompletionDatabaseOrExit, readServerConfigOrExit } from "./startup.js";

turnOffAllocationSitePretenuring();
const { config, signonClientId } = readServerConfigOrExit(process.env);
// Start-up notes go to the console; once the app exists, the pool's outage lines go to its JSON log.
const logTo: { app?: { info(message: string): void; warn(message: string): void } } = {};
// Live but not ready until it listens itself, so that a supervisor does not restart it while it waits.
const starting = await answerWhileStarting(config.host, config.port);
// Started before its database (or during a restart), it waits for it, logging once, instead of exiting.
const database = await openCompletionDatabaseOrExit(
  config,
  {
    info: (message) => (logTo.app ? logTo.app.info(message) : console.log(message)),
    warn: (message) => (logTo.app ? logTo.app.warn(message) : console.warn(message)),
  },
  { waitWhileUnavailable: true },
);
const callers = new SignonCallerResolver({
  signonUrl: config.signonUrl,
  clientId: signonClientId,
  cacheSeconds: config.callerCacheSeconds,
  staleSeconds: config.callerStaleSeconds,
});
const ctx = createContext(config, database.db, callers, () => new Date(), database.readDb);
const app = await buildApp(ctx, {
  logger: { level: process.env["LOG_LEVEL"] ?? "info" },
  metricsToken: config.metricsToken,
  readRouter: database.reads,
  trustProxy: config.trustProxy,
  signonPushes: callers.verifier,
});
logTo.app = { info: (message) => app.log.info(message), warn: (message) => app.log.warn(message) };
const worker =
  config.staleWorkerIntervalMs > 0
    ? startStaleWorker(ctx, {
        intervalMs: config.staleWorkerIntervalMs,
        onError: (error) => app.log.error({ err: error }, "stale worker round failed"),
        log: { info: (message) => app.log.info(message), warn: (message) => app.log.warn(message) },
      })
    : null;

let closing = false;
async function shutdown(signal: string): Promise<void> {
  if (closing) return;
  closing = true;
  app.log.info(`${signal}: closing`);
  await worker?.stop();
  // Requests still arriving on kept-alive connections are answered, then the connections close.
  await drainAndClose(app);
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

await starting.release();
await app.listen({ host: config.host, port: config.port });
