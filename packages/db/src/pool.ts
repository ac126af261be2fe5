import pg from "pg";
import { connectionTls } from "./connection-tls.js";
import { describeDatabaseError } from "./faults.js";
import { silentLogger, type Logger } from "./logger.js";
import { OutageTracker } from "./outage-tracker.js";
import { boundStatements, DEFAULT_STATEMENT_TIMEOUT_MS, inCallersStatementTimeout } from "./statement-timeout.js";

/** Options of {@link createPool}. */
export interface PoolOptions {
  /**
   * Connection string, e.g. `postgres://user@host:5432/db`, with libpq's TLS
   * parameters as node-postgres reads them (`sslmode`, `sslrootcert`, `sslcert`,
   * `sslkey`; docs/configuration.md says what each `sslmode` does). The files
   * are read again for every new connection, so a renewed CA certificate is
   * used without a restart.
   */
  url: string;
  /** The setting `url` comes from, named in log lines about refusals over TLS (default `DATABASE_URL`). */
  setting?: string;
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
  /**
   * A statement that has had no answer after this long is given up, with its
   * connection (default {@link DEFAULT_STATEMENT_TIMEOUT_MS}, 30 000 ms; `null`
   * for no bound): it fails as "database unavailable", so a request on a
   * stalled connection gets 503 instead of hanging. Long operations run inside
   * `withStatementTimeout` with a bound of their own.
   */
  statementTimeoutMs?: number | null;
  /**
   * An idle connection is closed after this long (default
   * {@link idleConnectionsFor}: 250 ms over a Unix socket, 10 s over TCP).
   */
  idleTimeoutMs?: number;
}

/**
 * How long an idle connection to `url` stays open by default, and how many
 * stay open however long they are idle. Over a Unix socket (a server on this
 * machine, such as the embedded one): one connection stays, for the steady
 * trickle of requests and background polls, and every further one closes
 * after 250 ms idle, since opening one again costs about a millisecond while
 * each idle one holds a server process of 10 to 20 MB of this machine's
 * memory; under load, connections are reused long before that. Over TCP,
 * where a new connection costs round trips (and TLS): all close after 10 s.
 */
export function idleConnectionsFor(url: string): { idleTimeoutMs: number; kept: number } {
  return overUnixSocket(url) ? { idleTimeoutMs: 250, kept: 1 } : { idleTimeoutMs: 10_000, kept: 0 };
}

/** Whether `url` reaches its server through a Unix socket (a `host` that is a folder, as libpq has it). */
function overUnixSocket(url: string): boolean {
  try {
    const parsed = new URL(url);
    const host = parsed.searchParams.get("host") ?? decodeURIComponent(parsed.hostname);
    return host.startsWith("/");
  } catch {
    return false;
  }
}

/** After this long without traffic, TCP keepalive probes check that the server is still there. */
export const KEEPALIVE_INITIAL_DELAY_MS = 10_000;

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
 * A connection that stalls without being closed (packets dropped, no reset)
 * is found two ways: TCP keepalive probes it after
 * {@link KEEPALIVE_INITIAL_DELAY_MS} without traffic, and a statement that has
 * no answer within `statementTimeoutMs` destroys it (see `boundStatements`).
 *
 * The log gets one warning when connections start failing and one line
 * when a new connection succeeds again, not one per failed client.
 */
export function createPool(options: PoolOptions): pg.Pool {
  const tls = connectionTls(options.url);
  const context = { server: tls.server, setting: options.setting ?? "DATABASE_URL", rootCert: tls.rootCert };
  const describe = (error: unknown): string => describeDatabaseError(error, context);
  const outage = new OutageTracker("database pool", options.log ?? silentLogger, { minRetryMs: 0, maxRetryMs: 0, describe });
  const idle = idleConnectionsFor(options.url);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    idleTimeoutMillis: options.idleTimeoutMs ?? idle.idleTimeoutMs,
    min: options.idleTimeoutMs === undefined ? idle.kept : 0,
    // A connection cut without a FIN or RST (a failed-over host, a dropped route) is noticed instead of waited on forever.
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
  });
  const statementTimeoutMs = options.statementTimeoutMs === undefined ? DEFAULT_STATEMENT_TIMEOUT_MS : options.statementTimeoutMs;
  const connectionFailed = (error: Error): void => {
    if (!outage.failed(error)) (options.log ?? silentLogger).warn(`database: a connection failed: ${describe(error)}`);
  };
  // A checkout that waits calls back from another request's release or a new connection's events:
  // its callback (pool.query's among them) keeps the caller's bound, so withStatementTimeout holds.
  const connect = pool.connect.bind(pool) as (callback?: (...args: unknown[]) => void) => unknown;
  (pool as unknown as { connect: typeof connect }).connect = (callback) => {
    try {
      return callback === undefined ? connect() : connect(inCallersStatementTimeout(callback));
    } catch (error) {
      // pg reads the connection string's TLS files as it makes a client, and throws here when one has gone:
      // the checkout fails as a failed connection does, instead of throwing out of pool.query.
      if (callback === undefined) return Promise.reject(error as Error);
      callback(error);
      return undefined;
    }
  };
  pool.on("error", connectionFailed);
  pool.on("connect", (client) => {
    client.on("error", connectionFailed);
    boundStatements(client, statementTimeoutMs);
    outage.succeeded();
  });
  return pool;
}
