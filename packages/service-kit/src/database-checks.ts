import { isDatabaseUnavailable, pendingMigrations, type MigrationSet, type RunQuery } from "@tessera/db";
import { CheckFailure, type ReadinessCheck } from "./health.js";

/**
 * The readiness checks of a service on PostgreSQL (or the embedded database):
 * `database` (the server answers `select 1`) and `migrations` (every migration
 * of the service's sets is recorded as applied). While the database cannot be
 * reached, both fail with the reason "database unavailable".
 */
export function databaseReadinessChecks(runQuery: RunQuery, migrations: readonly MigrationSet[]): Record<string, ReadinessCheck> {
  return {
    database: () => saying(runQuery("select 1")),
    migrations: () =>
      saying(
        (async () => {
          const pending = await pendingMigrations(runQuery, migrations);
          if (pending.length > 0) throw new CheckFailure(`${pending.length} migration(s) not applied`);
        })(),
      ),
  };
}

/** Resolves when `work` does; a failure for want of the database becomes a CheckFailure that says so. */
async function saying(work: Promise<unknown>): Promise<void> {
  try {
    await work;
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw new CheckFailure("database unavailable");
    throw error;
  }
}
