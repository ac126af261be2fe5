import { DEFAULT_MIGRATION_LOCK_ATTEMPTS, DEFAULT_MIGRATION_LOCK_TIMEOUT_MS, DEFAULT_READ_MAX_LAG_MS, DEFAULT_READ_TIMEOUT_MS, parseReadUrls, productionTlsProblem } from "@tessera/db";
/** The completion service's configuration, read once at start-up. */
export interface CompletionConfig {
  /** PostgreSQL connection string; undefined: the embedded PostgreSQL server of ./data. */
  readonly databaseUrl: string | undefined;
  /** `DATABASE_READ_URL`: replicas for the reads that tolerate a little lag (list, detail, stats); empty: the primary serves them. */
  readonly databaseReadUrls: readonly string[];
  /** A replica further behind the primary than this many milliseconds is skipped. */
  readonly databaseReadMaxLagMs: number;
  /** A read on a replica without a connection, or without an answer, after this many milliseconds skips it for the primary. */
  readonly databaseReadTimeoutMs: number;
  /** Most database connections this process opens; null: the pool's default (10 on PostgreSQL, 4 embedded). */
  readonly databasePoolSize: number | null;
  /** A database statement without an answer after this many seconds fails as "database unavailable" (its connection is given up). */
  readonly databaseStatementTimeoutSeconds: number;
  /** How long a migration's statement may wait for a lock before its transaction is rolled back and tried again. */
  readonly databaseMigrationLockTimeoutMs: number;
  /** How many times a migration that met the lock timeout is tried before the start (or `completion migrate`) fails. */
  readonly databaseMigrationLockAttempts: number;
  /** Base URL of the Sign-on service, whose `/user.json` resolves bearer tokens. */
  readonly signonUrl: string;
  /**
   * The `client_id` of the `completion` application in Sign-on: bearer tokens are checked as
   * this application's, so a token issued to another application is refused. Required by the
   * server (see `requireSignonClientId`); the command line authenticates nobody and needs none.
   */
  readonly signonClientId: string | null;
  /** Block types whose aggregates are stored and may be requested (C8). */
  readonly aggregatorTypes: readonly string[];
  /** C14: ignore stored aggregates for stale single-user reads. */
  readonly rebuildStaleFromScratch: boolean;
  /** How long a resolved bearer token is trusted, in seconds (at most 60). */
  readonly callerCacheSeconds: number;
  /** How long past that a caller Sign-on returned is still trusted while Sign-on cannot answer (unreachable, 5xx), in seconds; 0: never. */
  readonly callerStaleSeconds: number;
  /** Interface and port to listen on. */
  readonly host: string;
  readonly port: number;
  /** Whether the hot read queries run as named prepared statements. */
  readonly preparedStatements: boolean;
  /** Pause of the stale-record worker between empty polls, in milliseconds; 0 disables the worker. */
  readonly staleWorkerIntervalMs: number;
  /** Bearer token that `GET /metrics` requires, or `null` to leave it open to whoever reaches the port. */
  readonly metricsToken: string | null;
  /** Whether to take the scheme, host and client address from a reverse proxy's `X-Forwarded-*` headers. */
  readonly trustProxy: boolean;
}

/** Bad configuration: the message names the variable and why. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export const DEFAULT_AGGREGATOR_TYPES: readonly string[] = ["course", "chapter", "sequential", "vertical"];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}; got "${text}".`);
  }
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback = false): boolean {
  if (env[name] === undefined || env[name] === "") return fallback;
  const text = (env[name] ?? "").toLowerCase();
  if (["", "0", "false", "no", "off"].includes(text)) return false;
  if (["1", "true", "yes", "on"].includes(text)) return true;
  throw new ConfigError(`${name} must be true or false; got "${env[name] ?? ""}".`);
}

function metricsToken(env: NodeJS.ProcessEnv): string | null {
  const text = env["COMPLETION_METRICS_TOKEN"]?.trim();
  if (!text) return null;
  if (text.length < 16 || /\s/.test(text)) throw new ConfigError("COMPLETION_METRICS_TOKEN must be at least 16 characters without spaces.");
  return text;
}

function signonClientId(env: NodeJS.ProcessEnv): string | null {
  const text = env["COMPLETION_SIGNON_CLIENT_ID"]?.trim();
  if (!text) return null;
  if (text.length > 255 || /[\s\0]/.test(text)) throw new ConfigError("COMPLETION_SIGNON_CLIENT_ID must be a client id of at most 255 characters without spaces.");
  return text;
}

/**
 * The client id the server checks bearer tokens as; throws when `COMPLETION_SIGNON_CLIENT_ID` is unset,
 * since without it a token issued to any application would do.
 */
export function requireSignonClientId(config: CompletionConfig): string {
  if (config.signonClientId === null) {
    throw new ConfigError(
      "COMPLETION_SIGNON_CLIENT_ID is required: the client id of the completion application in Sign-on " +
        "(`signon apps show --app completion`), so that only tokens issued to it are accepted.",
    );
  }
  return config.signonClientId;
}

function url(env: NodeJS.ProcessEnv, name: string, fallback: string, protocols: readonly string[]): string {
  const text = env[name] ?? fallback;
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new ConfigError(`${name} must be a URL; got "${text}".`);
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(`${name} must use ${protocols.join(" or ")}; got "${text}".`);
  return text;
}

/**
 * `COMPLETION_CALLER_STALE_SECONDS` by default: how long past its cache time a
 * caller Sign-on returned is still trusted while Sign-on cannot answer. A
 * failover of the database at the documented Patroni settings (`ttl: 30`,
 * `loop_wait: 10`) has Sign-on answer 503 for 30 to 40 s (the leader key
 * expires, the next loop promotes, Sign-on's pool reconnects), and the loss
 * of the coordination store about as long; 300 s outlasts either several
 * times over, and a Sign-on restart besides. While Sign-on's database is away
 * it can neither revoke a token nor push a change, so nothing it would have
 * said is missed; its pushes, once it is back, drop the answers they concern.
 */
export const DEFAULT_CALLER_STALE_SECONDS = 300;

/** `DATABASE_READ_URL`'s addresses, each a PostgreSQL URL. */
function readUrls(env: NodeJS.ProcessEnv): string[] {
  const urls = parseReadUrls(env["DATABASE_READ_URL"]);
  for (const text of urls) url({ DATABASE_READ_URL: text }, "DATABASE_READ_URL", "", ["postgres:", "postgresql:"]);
  return urls;
}

/**
 * With `NODE_ENV=production`, the database on another machine is reached only
 * over TLS that checks its certificate (`sslmode=verify-full`, or `verify-ca`);
 * a Unix socket or a loopback address needs none.
 */
function requireDatabaseTls(databaseUrl: string | undefined, readUrls: readonly string[]): void {
  for (const [name, text] of [["DATABASE_URL", databaseUrl] as const, ...readUrls.map((readUrl) => ["DATABASE_READ_URL", readUrl] as const)]) {
    const problem = text === undefined ? null : productionTlsProblem(text);
    if (problem !== null) throw new ConfigError(`${name} ${problem}.`);
  }
}

/**
 * Reads the configuration from environment variables:
 * `NODE_ENV` (`production`: the database's TLS rule of `requireDatabaseTls`; anything else, or unset: none),
 * `DATABASE_URL` (default: none, which means the embedded database; libpq's `sslmode`, `sslrootcert`, `sslcert` and
 * `sslkey` in it are used as node-postgres reads them),
 * `DATABASE_READ_URL` (default: none; one or more replicas, separated by spaces or commas, for the list, detail and
 * stats reads), `DATABASE_READ_MAX_LAG_MS` (0–3,600,000, default 5,000: a replica further behind is skipped),
 * `DATABASE_READ_TIMEOUT_MS` (100–3,600,000, default 2,000: a read on a replica with no connection or no answer after
 * this long is answered by the primary, and the replica skipped until its next check answers),
 * `DATABASE_POOL_SIZE` (1-1000; default 10, and as many again per replica),
 * `DATABASE_STATEMENT_TIMEOUT_SECONDS` (1-3600, default 30: a statement without an answer after this long fails, 503),
 * `DATABASE_MIGRATION_LOCK_TIMEOUT_MS` (100-600,000, default 5,000) and `DATABASE_MIGRATION_LOCK_ATTEMPTS` (1-100,
 * default 5: a migration waits this long for a lock, and is tried this many times, before it fails),
 * `SIGNON_URL` (default `http://127.0.0.1:3000`),
 * `COMPLETION_SIGNON_CLIENT_ID` (the `completion` application's client id in Sign-on; required by the server),
 * `COMPLETION_AGGREGATOR_TYPES` (comma-separated; default course,chapter,sequential,vertical),
 * `COMPLETION_REBUILD_STALE_FROM_SCRATCH` (default false),
 * `COMPLETION_CALLER_CACHE_SECONDS` (0–60, default 30),
 * `COMPLETION_CALLER_STALE_SECONDS` (0–3600, default 300: how long past that a caller is still trusted while Sign-on
 * cannot answer; 0 never),
 * `HOST` (default 127.0.0.1), `PORT` (default 3001),
 * `COMPLETION_STALE_WORKER_INTERVAL_MS` (default 1000; 0 turns the worker off),
 * `COMPLETION_METRICS_TOKEN` (default unset: `/metrics` open; at least 16 characters without spaces),
 * `COMPLETION_TRUST_PROXY` (default false: `X-Forwarded-*` headers are ignored),
 * `COMPLETION_PREPARED_STATEMENTS` (default true; false behind a connection pooler that cannot keep
 * named prepared statements).
 */
export function readConfig(env: NodeJS.ProcessEnv): CompletionConfig {
  const types = (env["COMPLETION_AGGREGATOR_TYPES"] ?? DEFAULT_AGGREGATOR_TYPES.join(","))
    .split(",")
    .map((type) => type.trim())
    .filter((type) => type !== "");
  if (!types.includes("course")) throw new ConfigError("COMPLETION_AGGREGATOR_TYPES must include course.");
  for (const type of types) {
    if (!/^[\w-]+$/.test(type) || type === "mean" || type === "username") {
      throw new ConfigError(`COMPLETION_AGGREGATOR_TYPES: "${type}" is not a block type.`);
    }
  }
  const databaseUrl = env["DATABASE_URL"] ? url(env, "DATABASE_URL", "", ["postgres:", "postgresql:"]) : undefined;
  const databaseReadUrls = readUrls(env);
  if (env["NODE_ENV"]?.trim() === "production") requireDatabaseTls(databaseUrl, databaseReadUrls);
  return {
    databaseUrl,
    databaseReadUrls,
    databaseReadMaxLagMs: integer(env, "DATABASE_READ_MAX_LAG_MS", DEFAULT_READ_MAX_LAG_MS, 0, 3_600_000),
    databaseReadTimeoutMs: integer(env, "DATABASE_READ_TIMEOUT_MS", DEFAULT_READ_TIMEOUT_MS, 100, 3_600_000),
    databasePoolSize: env["DATABASE_POOL_SIZE"] ? integer(env, "DATABASE_POOL_SIZE", 10, 1, 1000) : null,
    databaseStatementTimeoutSeconds: integer(env, "DATABASE_STATEMENT_TIMEOUT_SECONDS", 30, 1, 3600),
    databaseMigrationLockTimeoutMs: integer(env, "DATABASE_MIGRATION_LOCK_TIMEOUT_MS", DEFAULT_MIGRATION_LOCK_TIMEOUT_MS, 100, 600_000),
    databaseMigrationLockAttempts: integer(env, "DATABASE_MIGRATION_LOCK_ATTEMPTS", DEFAULT_MIGRATION_LOCK_ATTEMPTS, 1, 100),
    signonUrl: url(env, "SIGNON_URL", "http://127.0.0.1:3000", ["http:", "https:"]),
    signonClientId: signonClientId(env),
    aggregatorTypes: [...new Set(types)],
    rebuildStaleFromScratch: flag(env, "COMPLETION_REBUILD_STALE_FROM_SCRATCH"),
    callerCacheSeconds: integer(env, "COMPLETION_CALLER_CACHE_SECONDS", 30, 0, 60),
    callerStaleSeconds: integer(env, "COMPLETION_CALLER_STALE_SECONDS", DEFAULT_CALLER_STALE_SECONDS, 0, 3600),
    host: env["HOST"] ?? "127.0.0.1",
    port: integer(env, "PORT", 3001, 0, 65535),
    staleWorkerIntervalMs: integer(env, "COMPLETION_STALE_WORKER_INTERVAL_MS", 1000, 0, 3_600_000),
    metricsToken: metricsToken(env),
    trustProxy: flag(env, "COMPLETION_TRUST_PROXY"),
    preparedStatements: flag(env, "COMPLETION_PREPARED_STATEMENTS", true),
  };
}
