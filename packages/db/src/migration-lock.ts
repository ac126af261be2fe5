/** Default of `lockTimeoutMs` (`DATABASE_MIGRATION_LOCK_TIMEOUT_MS`): how long a migration's statement may wait for a lock. */
export const DEFAULT_MIGRATION_LOCK_TIMEOUT_MS = 5000;

/** Default of `lockAttempts` (`DATABASE_MIGRATION_LOCK_ATTEMPTS`): how many times a migration that met the lock timeout is run. */
export const DEFAULT_MIGRATION_LOCK_ATTEMPTS = 5;

/** The longest pause between two attempts. */
const MAX_RETRY_DELAY_MS = 30_000;

/** PostgreSQL's SQLSTATE for a lock not granted within `lock_timeout` (lock_not_available). */
const LOCK_NOT_AVAILABLE = "55P03";

/** Whether `error` is PostgreSQL's refusal to wait longer for a lock. */
export function isLockTimeout(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === LOCK_NOT_AVAILABLE;
}

/** The pause after the `attempt`th attempt: `base` (default 1 s), doubled each time, at most 30 s. */
export function lockRetryDelayMs(attempt: number, base = 1000): number {
  return Math.min(MAX_RETRY_DELAY_MS, base * 2 ** Math.max(0, attempt - 1));
}

/**
 * A migration that could not take a lock it needs within the lock timeout, at
 * every attempt: a transaction held it all along (often one left open, `idle
 * in transaction`, or a long report). Nothing of that migration was applied;
 * those before it were.
 */
export class MigrationLockTimeout extends Error {
  override readonly name = "MigrationLockTimeout";
  readonly schema: string;
  readonly tag: string;
  readonly attempts: number;

  constructor(details: { schema: string; tag: string; lockTimeoutMs: number; attempts: number; cause: unknown }) {
    super(
      `migration ${details.tag} of schema ${details.schema} could not take a lock within ${details.lockTimeoutMs} ms, ` +
        `${details.attempts} time(s) (DATABASE_MIGRATION_LOCK_TIMEOUT_MS, DATABASE_MIGRATION_LOCK_ATTEMPTS), and was not applied: ` +
        `a transaction holds a lock on a table it changes. Find it with SELECT pid, state, xact_start, query FROM pg_stat_activity ` +
        `WHERE xact_start < now() - interval '1 minute', end it (or wait for it), and migrate again`,
      { cause: details.cause },
    );
    this.schema = details.schema;
    this.tag = details.tag;
    this.attempts = details.attempts;
  }
}
