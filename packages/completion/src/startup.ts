import { startDatabase, type StartedDatabase } from "@tessera/db";
import { ConfigError, readConfig, type CompletionConfig } from "./config.js";
import { COMPLETION_MIGRATIONS } from "./db/database.js";
import * as schema from "./db/schema.js";

/** Reads the configuration from `env`; on bad configuration says why on stderr and exits with status 2. */
export function readConfigOrExit(env: NodeJS.ProcessEnv): CompletionConfig {
  try {
    return readConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`completion: ${error.message}`);
    process.exit(2);
  }
}

/** Opens the service's database (`DATABASE_URL`, or the embedded one) and applies its migrations. */
export function openCompletionDatabase(
  config: CompletionConfig,
  log: { info: (message: string) => void; warn: (message: string) => void },
): Promise<StartedDatabase<typeof schema>> {
  return startDatabase({
    url: config.databaseUrl,
    ...(config.databasePoolSize === null ? {} : { poolMax: config.databasePoolSize }),
    migrations: [COMPLETION_MIGRATIONS],
    schema,
    log,
  });
}
