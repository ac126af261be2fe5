import { startDatabase, type Logger, type StartedDatabase } from "@tessera/db";
import type { SignonConfig } from "./config.js";
import { signonMigrations } from "./db/migrations.js";
import * as schema from "./db/schema.js";

/**
 * Connects to Sign-on's database and applies pending migrations: PostgreSQL
 * at `DATABASE_URL`, or else the embedded PostgreSQL server of `<dataDir>`
 * (the one `npm start` runs, or one started for this process).
 * With `waitWhileUnavailable` (the server) it waits for a database it cannot
 * reach yet instead of failing.
 */
export function openSignonDatabase(
  config: SignonConfig,
  log?: Logger,
  options: { waitWhileUnavailable?: boolean; migrate?: boolean } = {},
): Promise<StartedDatabase<typeof schema>> {
  return startDatabase({
    url: config.databaseUrl ?? undefined,
    readUrls: config.databaseReadUrls,
    readMaxLagMs: config.databaseReadMaxLagMs,
    readTimeoutMs: config.databaseReadTimeoutMs,
    ...(config.databasePoolSize === null ? {} : { poolMax: config.databasePoolSize }),
    statementTimeoutMs: config.databaseStatementTimeoutSeconds * 1000,
    migrationLockTimeoutMs: config.databaseMigrationLockTimeoutMs,
    migrationLockAttempts: config.databaseMigrationLockAttempts,
    waitWhileUnavailable: options.waitWhileUnavailable ?? false,
    dataDir: config.dataDir,
    // `signon migrate` applies them itself, to say what it did.
    migrations: options.migrate === false ? [] : [signonMigrations],
    schema,
    ...(log ? { log } : {}),
  });
}
