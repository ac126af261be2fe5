import pg from "pg";
import { describeDatabaseError } from "./faults.js";
import { silentLogger, type Logger } from "./logger.js";
import { OutageTracker } from "./outage-tracker.js";

/** Options of {@link createPool}. */
export interface PoolOptions {
  /** Connection string, e.g. `postgres://user@host:5432/db`. */
  url: string;
  /** Most connections the pool opens (default 10). */
  max?: number;
  /** Where connection failures and recoveries are reported. */
  log?: Logger;
  /**
   * A checkout that has neither got an idle connection nor opened a new one
   * after this long fails (default 10 000 ms), so a request meets an error
   * it can answer with 503 instead of hanging while the server cannot be reached.
   */
  connectionTimeoutMs?: number;
}

/** What a checkout waits for a connection at most, by default. */
export const DEFAULT_CONNECTION_TIMEOUT_MS = 10_000;

/**
 * Creates a `pg.Pool` for a connection string that survives the database
 * going away (a restart, a failover, `pg_terminate_backend`, a network reset).
 *
 * A connection that fails makes `pg` emit `error` on its client, and on the
 * pool when the client is idle; an `error` event without a listener ends the
 * process. So the pool has a listener, and so does every client from the
 * moment it connects, whether idle, checked out between statements, inside a
 * transaction or held by a worker: the failure reaches whoever runs a query
 * on it as a rejected promise, and the pool drops the client when it is
 * released and opens a new connection on a later checkout. Named prepared
 * statements are prepared again on the new connection by `pg` itself.
 *
 * The log gets one warning when connections start failing and one line
 * when a new connection succeeds again, not one per failed client.
 */
export function createPool(options: PoolOptions): pg.Pool {
  const outage = new OutageTracker("database pool", options.log ?? silentLogger, { minRetryMs: 0, maxRetryMs: 0 });
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    // A connection cut without a FIN or RST (a failed-over host, a dropped route) is noticed instead of waited on forever.
    keepAlive: true,
  });
  const connectionFailed = (error: Error): void => {
    if (!outage.failed(error)) (options.log ?? silentLogger).warn(`database: a connection failed: ${describeDatabaseError(error)}`);
  };
  pool.on("error", connectionFailed);
  pool.on("connect", (client) => {
    client.on("error", connectionFailed);
    outage.succeeded();
  });
  return pool;
}
