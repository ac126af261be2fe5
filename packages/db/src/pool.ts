import pg from "pg";
import { silentLogger, type Logger } from "./logger.js";

/** Options of {@link createPool}. */
export interface PoolOptions {
  /** Connection string, e.g. `postgres://user@host:5432/db`. */
  url: string;
  /** Most connections the pool opens (default 10). */
  max?: number;
  /** Where connection errors of idle clients are reported. */
  log?: Logger;
}

/**
 * Creates a `pg.Pool` for a connection string.
 *
 * An idle client whose connection drops makes the pool emit `error`; without a
 * listener that would end the process, so the error is logged instead and the
 * pool replaces the client on its next checkout.
 */
export function createPool(options: PoolOptions): pg.Pool {
  const log = options.log ?? silentLogger;
  const pool = new pg.Pool({ connectionString: options.url, max: options.max ?? 10 });
  pool.on("error", (error) => {
    log.warn(`database: an idle connection failed: ${error.message}`);
  });
  return pool;
}
