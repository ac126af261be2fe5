import { isDatabaseUnavailable, pendingMigrations, type MigrationSet, type RunQuery } from "@tessera/db";
import { CheckFailure, type ReadinessCheck } from "./health.js";

/**
 * The readiness checks of a service on PostgreSQL (or the embedded database):
 * `database` (the server answers `select 1`) and `migrations` (every migration
 * of the service's sets is recorded as applied). While the database cannot be
 * reached, both fail with the reason "database unavailable".
 *
 * Their queries run one after another, so that a probe holds one connection
 * of the pool, not two: on a server on this machine every connection is a
 * server process of 10 to 20 MB, kept until the pool's idle timeout.
 */
export function databaseReadinessChecks(query: RunQuery, migrations: readonly MigrationSet[]): Record<string, ReadinessCheck> {
  const runQuery = oneAtATime(query);
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

/** `query`, each call starting once the previous one has settled. */
function oneAtATime(query: RunQuery): RunQuery {
  let previous: Promise<unknown> = Promise.resolve();
  return (text) => {
    const result = previous.then(() => query(text));
    previous = result.catch(() => undefined);
    return result;
  };
}
