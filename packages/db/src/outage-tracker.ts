import { describeDatabaseError, isDatabaseUnavailable } from "./faults.js";
import type { Logger } from "./logger.js";

/** Options of {@link OutageTracker}. */
export interface OutageTrackerOptions {
  /** Milliseconds since some fixed point (default `Date.now`); tests pass a fake clock. */
  now?: () => number;
  /** The first retry during an outage waits this long (default 250 ms); each later one twice as long. */
  minRetryMs?: number;
  /** Retries during an outage never wait longer than this (default 2000 ms), so work resumes soon after the database returns. */
  maxRetryMs?: number;
  /** How the error that starts an outage is told in the log (default {@link describeDatabaseError}). */
  describe?: (error: unknown) => string;
}

/**
 * Keeps track of one worker's view of database outages, so that it logs one
 * line when an outage starts and one when it ends (with its duration) instead
 * of one per failed poll, and backs off while it lasts.
 *
 * ```ts
 * const outage = new OutageTracker("push delivery", log);
 * try { await round(); outage.succeeded(); }
 * catch (error) { if (!outage.failed(error)) log.error(…); }
 * await sleep(outage.retryDelayMs(pollIntervalMs));
 * ```
 */
export class OutageTracker {
  readonly #name: string;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #minRetryMs: number;
  readonly #maxRetryMs: number;
  readonly #describe: (error: unknown) => string;
  #since: number | null = null;
  #failures = 0;

  /** @param name what is affected, as the log lines name it (`push delivery`, `stale worker`). */
  constructor(name: string, log: Logger, options: OutageTrackerOptions = {}) {
    this.#name = name;
    this.#log = log;
    this.#now = options.now ?? Date.now;
    this.#minRetryMs = options.minRetryMs ?? 250;
    this.#maxRetryMs = options.maxRetryMs ?? 2000;
    this.#describe = options.describe ?? ((error) => describeDatabaseError(error));
  }

  /** Whether an outage is going on (the last attempt failed for want of the database). */
  get down(): boolean {
    return this.#since !== null;
  }

  /**
   * Records a failed attempt. When `error` says the database is unavailable
   * ({@link isDatabaseUnavailable}), returns `true`, and logs a warning if
   * this starts an outage; otherwise returns `false` and logs nothing (the
   * caller reports it as the bug it is).
   */
  failed(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    this.#failures += 1;
    if (this.#since === null) {
      this.#since = this.#now();
      this.#log.warn(`${this.#name}: database unavailable (${this.#describe(error)}); retrying until it answers`);
    }
    return true;
  }

  /** Records a successful attempt; if an outage was going on, logs that it is over and how long it lasted. */
  succeeded(): void {
    if (this.#since === null) return;
    const seconds = (this.#now() - this.#since) / 1000;
    this.#log.info(`${this.#name}: database available again after ${seconds.toFixed(1)} s (${this.#failures} failed attempt(s))`);
    this.#since = null;
    this.#failures = 0;
  }

  /**
   * How long to wait before the next attempt: `normalMs` normally; during an
   * outage at least that, and a delay doubling from the minimum up to the
   * maximum retry delay.
   */
  retryDelayMs(normalMs: number): number {
    if (this.#since === null) return normalMs;
    return Math.max(normalMs, Math.min(this.#maxRetryMs, this.#minRetryMs * 2 ** Math.min(this.#failures - 1, 16)));
  }
}
