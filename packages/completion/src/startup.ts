import { DatabaseStartError, startDatabase, type StartedDatabase } from "@tessera/db";
import { ConfigError, readConfig, requireSignonClientId, type CompletionConfig } from "./config.js";
import { COMPLETION_MIGRATIONS } from "./db/database.js";
import * as schema from "./db/schema.js";

/** Reads the configuration from `env`; on bad configuration says why on stderr and exits with status 2. */
export function readConfigOrExit(env: NodeJS.ProcessEnv): CompletionConfig {
  return orExit(() => readConfig(env));
}

/** The server's configuration and the client id it checks bearer tokens as; exits with status 2 when either is unusable. */
export function readServerConfigOrExit(env: NodeJS.ProcessEnv): { config: CompletionConfig; signonClientId: string } {
  return orExit(() => {
    const config = readConfig(env);
    return { config, signonClientId: requireSignonClientId(config) };
  });
}

function orExit<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`completion: ${error.message}`);
    process.exit(2);
  }
}

/**
 * Opens the service's database (`DATABASE_URL`, or the embedded one) and
 * applies its migrations. With `waitWhileUnavailable` (the server) it waits
 * for a database it cannot reach yet instead of failing.
 */
export function openCompletionDatabase(
  config: CompletionConfig,
  log: { info: (message: string) => void; warn: (message: string) => void },
  options: { waitWhileUnavailable?: boolean; migrate?: boolean } = {},
): Promise<StartedDatabase<typeof schema>> {
  return startDatabase({
    url: config.databaseUrl,
    readUrls: config.databaseReadUrls,
    readMaxLagMs: config.databaseReadMaxLagMs,
    readTimeoutMs: config.databaseReadTimeoutMs,
    ...(config.databasePoolSize === null ? {} : { poolMax: config.databasePoolSize }),
    statementTimeoutMs: config.databaseStatementTimeoutSeconds * 1000,
    migrationLockTimeoutMs: config.databaseMigrationLockTimeoutMs,
    migrationLockAttempts: config.databaseMigrationLockAttempts,
    waitWhileUnavailable: options.waitWhileUnavailable ?? false,
    // `completion migrate` applies them itself, to say what it did.
    migrations: options.migrate === false ? [] : [COMPLETION_MIGRATIONS],
    schema,
    log,
  });
}

/**
 * `openCompletionDatabase`, but a database that cannot be used as configured
 * (login refused, database missing) is said in one sentence on stderr, and
 * the process exits with status 1, without a stack trace.
 */
export async function openCompletionDatabaseOrExit(...args: Parameters<typeof openCompletionDatabase>): Promise<StartedDatabase<typeof schema>> {
  try {
    return await openCompletionDatabase(...args);
  } catch (error) {
    if (!(error instanceof DatabaseStartError)) throw error;
    console.error(`completion: ${error.message}`);
    process.exit(1);
  }
}
