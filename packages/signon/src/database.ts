import { join } from "node:path";
import { startDatabase, type Logger, type StartedDatabase } from "@tessera/db";
import type { SignonConfig } from "./config.js";
import { signonMigrations } from "./db/migrations.js";
import * as schema from "./db/schema.js";

/**
 * Connects to Sign-on's database and applies pending migrations: PostgreSQL
 * at `DATABASE_URL`, or else the embedded database in `<dataDir>/pglite`
 * (shared with a server already running on it in another process).
 */
export function openSignonDatabase(config: SignonConfig, log?: Logger): Promise<StartedDatabase<typeof schema>> {
  return startDatabase({
    url: config.databaseUrl ?? undefined,
    ...(config.databasePoolSize === null ? {} : { poolMax: config.databasePoolSize }),
    dataDir: join(config.dataDir, "pglite"),
    migrations: [signonMigrations],
    schema,
    ...(log ? { log } : {}),
  });
}
