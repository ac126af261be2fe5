import { setTimeout as sleep } from "node:timers/promises";
import { transactionConflict, type TransactionConflict } from "./faults.js";

/**
 * How many times a transaction runs at most when PostgreSQL keeps ending it
 * with a deadlock or a serialization failure: the first run and four more.
 */
export const TRANSACTION_ATTEMPTS = 5;

/** The longest pause before a run again, in milliseconds: the pauses double from 25 ms up to this. */
const MAX_RETRY_DELAY_MS = 400;

/** Transactions run again, and transactions given up, since the process started: by the reason PostgreSQL gave. */
export interface TransactionRetryFigures {
  /** Runs ended by a conflict and started again. */
  readonly retried: Readonly<Record<TransactionConflict, number>>;
  /** Transactions still ended by a conflict at their last attempt, whose error reached the caller. */
  readonly gaveUp: Readonly<Record<TransactionConflict, number>>;
}

interface Counts {
  retried: Record<TransactionConflict, number>;
  gaveUp: Record<TransactionConflict, number>;
}

const countsByPool = new WeakMap<object, Counts>();

function countsOf(pool: object): Counts {
  let counts = countsByPool.get(pool);
  if (counts === undefined) {
    counts = { retried: { deadlock: 0, serialization_failure: 0 }, gaveUp: { deadlock: 0, serialization_failure: 0 } };
    countsByPool.set(pool, counts);
  }
  return counts;
}

/**
 * What the transactions on `pool` (a `pg.Pool` under a drizzle database)
 * have retried so far: the figures of `/metrics`
 * (`registerTransactionRetryMetrics` of `@tessera/service-kit`). The object
 * returned is live: it shows later retries as well.
 */
export function transactionRetryFigures(pool: object): TransactionRetryFigures {
  return countsOf(pool);
}

/**
 * The pause before attempt `attempt + 1` (`attempt` ≥ 1 has just failed), in
 * milliseconds: anything from nothing up to 25 ms × 2^(attempt − 1), at most
 * {@link MAX_RETRY_DELAY_MS} ("full jitter"), so transactions that
 * collided do not collide again in step.
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(MAX_RETRY_DELAY_MS, 25 * 2 ** (attempt - 1)));
}

/**
 * Runs `transaction` (one whole transaction, from BEGIN to COMMIT or
 * ROLLBACK), and again, up to {@link TRANSACTION_ATTEMPTS} runs in all, while
 * PostgreSQL ends it with a deadlock (40P01) or a serialization failure
 * (40001), after a short random pause each time; counted per pool (see
 * {@link transactionRetryFigures}). Any other error, or a conflict at the
 * last attempt, reaches the caller as it was thrown.
 */
export async function retryingConflicts<T>(pool: object, transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await transaction();
    } catch (error) {
      const conflict = transactionConflict(error);
      if (conflict === null) throw error;
      const counts = countsOf(pool);
      if (attempt >= TRANSACTION_ATTEMPTS) {
        counts.gaveUp[conflict] += 1;
        throw error;
      }
      counts.retried[conflict] += 1;
      await sleep(retryDelayMs(attempt));
    }
  }
}
