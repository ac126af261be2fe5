import { pathToFileURL } from "node:url";
import { DatabaseStartError } from "@tessera/db";
import { answerWhileStarting, drainAndClose, lazySchemaCompilers } from "@tessera/service-kit";
import Fastify, { type FastifyInstance } from "fastify";
import editorialApp from "./app.js";
import { ConfigError, configFromEnv } from "./config.js";

/** Where a started application's log lines (JSON, one per line) go: `write` gets each line. */
export interface LogDestination {
  write(line: string): void;
}

/**
 * Starts the editorial application from environment variables (see
 * `configFromEnv`) and listens, by default on 127.0.0.1:3002. Its log goes
 * to standard output, or to `options.log` (what `npm start` passes, which
 * runs it inside its own process).
 */
export async function startEditorialApp(
  env: Record<string, string | undefined> = process.env,
  options: { log?: LogDestination } = {},
): Promise<FastifyInstance> {
  const config = configFromEnv(env);
  const app = Fastify({
    // Registering the application waits for a database that cannot be reached yet, however long that takes.
    pluginTimeout: 0,
    // Each route's schemas are compiled at its first request, not all of them before the application is ready.
    schemaController: lazySchemaCompilers(),
    logger: {
      level: env["LOG_LEVEL"] ?? "info",
      // Paths only: the sign-in callback's query string carries the authorization code.
      serializers: { req: (request: { method: string; url: string }) => ({ method: request.method, path: pathOf(request.url) }) },
      ...(options.log === undefined ? {} : { stream: options.log }),
    },
  });
  // Live but not ready until it listens itself, so that a supervisor does not restart it while it waits.
  const starting = await answerWhileStarting(config.host, config.port);
  try {
    await app.register(editorialApp, { config: { ...config, database: { ...config.database, waitWhileUnavailable: true } } });
    await starting.release();
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await starting.release();
    await app.close();
    throw error;
  }
  return app;
}

function pathOf(url: string): string {
  return url.split("?")[0] ?? url;
}

async function main(): Promise<void> {
  let app: FastifyInstance;
  try {
    app = await startEditorialApp();
  } catch (error) {
    if (error instanceof ConfigError || error instanceof DatabaseStartError) {
      console.error(`editorial-app: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      app.log.info(`${signal}: closing`);
      drainAndClose(app).then(
        () => process.exit(0),
        (error: unknown) => {
          app.log.error({ err: error }, "close failed");
          process.exit(1);
        },
      );
    });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
