import { pendingMigrations, type MigrationSet, type RunQuery } from "@tessera/db";
import { CheckFailure, type ReadinessCheck } from "./health.js";

/**
 * The readiness checks of a service on PostgreSQL (or the embedded database):
 * `database` (the server answers `select 1`) and `migrations` (every migration
 * of the service's sets is recorded as applied).
 */
export function databaseReadinessChecks(runQuery: RunQuery, migrations: readonly MigrationSet[]): Record<string, ReadinessCheck> {
  return {
    database: async () => {
      await runQuery("select 1");
    },
    migrations: async () => {
      const pending = await pendingMigrations(runQuery, migrations);
      if (pending.length > 0) throw new CheckFailure(`${pending.length} migration(s) not applied`);
    },
  };
}
