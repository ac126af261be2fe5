/**
 * Which errors mean "the database cannot be reached right now" (as opposed to
 * a bad query or a constraint): what a PostgreSQL restart, a failover, a
 * network reset or an exhausted pool looks like to a `pg` client. Such an
 * error is worth answering with 503 and trying again later; any other is a
 * bug or bad input.
 *
 * This module imports nothing but `tls-refusals.ts`, which imports nothing, so
 * packages that must stay light (the Sign-on client) can use it through
 * `@tessera/db/faults`.
 */
import { describeTlsRefusal, tlsRefusal, type TlsRefusalContext } from "./tls-refusals.js";

export { tlsRefusal, describeTlsRefusal } from "./tls-refusals.js";
export type { TlsRefusal, TlsRefusalContext } from "./tls-refusals.js";

/** SQLSTATE codes, beyond class 08 (connection exception), that mean the server is going away or refusing sessions. */
const unavailableSqlStates = new Set([
  "57P01", // admin_shutdown: pg_terminate_backend, a fast shutdown
  "57P02", // crash_shutdown: another backend crashed, the server restarts
  "57P03", // cannot_connect_now: the server is starting up or shutting down
  "53300", // too_many_connections
  // read_only_sql_transaction: a write reached a server that is not (or not yet) the primary: during a failover, the
  // standby being promoted (the failover manager names it before its promotion ends) or a demoted old primary that
  // the proxy has not moved away from yet. The transaction did nothing; it succeeds once the promotion is done.
  "25006",
]);

/** Node socket error codes of a connection that could not be made or was lost. */
const unavailableSocketCodes = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/** Messages `pg` and `pg-pool` use for a lost connection, a connect or checkout timeout, or a pool being shut down. */
const unavailableMessages = [
  /^Connection terminated/, // "… unexpectedly", "… due to connection timeout"
  /^timeout exceeded when trying to connect$/, // pool checkout timeout
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^Cannot use a pool after calling end on the pool$/,
  /^Query read timeout/, // pg's query_timeout, and a statement given up by the pool's bound
];

/** How deep {@link isDatabaseUnavailable} follows `cause` and `errors`: wrappers nest a level or two, never more. */
const maxDepth = 5;

/**
 * Whether `error` (or what it wraps: drizzle's `DrizzleQueryError` keeps the
 * driver's error as `cause`) says the database is unreachable or refusing
 * sessions: SQLSTATE class 08, 57P01/57P02/57P03, 53300 or 25006 (a write
 * on a server that is not the primary yet, mid-failover); a socket error
 * (ECONNRESET, ECONNREFUSED, EPIPE, ETIMEDOUT, …); `pg`'s "Connection
 * terminated …" and "not queryable"; a pool checkout timeout; a pool that
 * has been ended (the process is shutting down); or a new connection refused
 * over TLS ({@link tlsRefusal}: the server wants TLS, offers none, or a
 * certificate does not verify). A running service cannot mend the last by
 * itself, but the deployment can (a certificate renewed, a server's TLS
 * turned on) without restarting it, so requests meanwhile get 503 like any
 * outage; at start-up, `startDatabase` stops on it instead (see
 * `configurationMistake`).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return unavailableAt(error, 0) || tlsRefusal(error) !== null;
}

function unavailableAt(error: unknown, depth: number): boolean {
  if (depth > maxDepth || typeof error !== "object" || error === null) return false;
  const { code, message, cause, errors } = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === "string") {
    if (code.startsWith("08") && code.length === 5) return true;
    if (unavailableSqlStates.has(code) || unavailableSocketCodes.has(code)) return true;
  }
  if (typeof message === "string" && unavailableMessages.some((pattern) => pattern.test(message))) return true;
  if (cause !== undefined && unavailableAt(cause, depth + 1)) return true;
  return Array.isArray(errors) && errors.some((inner) => unavailableAt(inner, depth + 1));
}

/** Why PostgreSQL ended a transaction that may well succeed when run again from its start. */
export type TransactionConflict = "deadlock" | "serialization_failure";

/** SQLSTATE codes of a transaction PostgreSQL rolled back only because of what ran beside it. */
const conflictSqlStates: ReadonlyMap<string, TransactionConflict> = new Map([
  ["40P01", "deadlock"], // deadlock_detected: this transaction was chosen to break a cycle of lock waits
  ["40001", "serialization_failure"], // serialization_failure: REPEATABLE READ or SERIALIZABLE found a conflicting write
]);

/**
 * Whether `error` (or what it wraps) says PostgreSQL ended the transaction
 * because of a concurrent one: a deadlock (40P01) or a serialization failure
 * (40001). Such a transaction did nothing and may be run again from its
 * start; `@tessera/db` does so a few times before its error reaches the
 * caller. Returns which, or null for any other error.
 */
export function transactionConflict(error: unknown): TransactionConflict | null {
  return conflictAt(error, 0);
}

function conflictAt(error: unknown, depth: number): TransactionConflict | null {
  if (depth > maxDepth || typeof error !== "object" || error === null) return null;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  if (typeof code === "string") {
    const conflict = conflictSqlStates.get(code);
    if (conflict !== undefined) return conflict;
  }
  return cause === undefined ? null : conflictAt(cause, depth + 1);
}

/**
 * A short description of a database error for a log line: the SQLSTATE or
 * socket code and the driver's message, never the SQL text or its parameters
 * (drizzle puts both in its own message, and parameters can be personal data).
 * A refusal over TLS is one sentence that says what to set
 * ({@link describeTlsRefusal}), naming `context`'s server and setting when
 * given, with the driver's code and message after it in brackets.
 */
export function describeDatabaseError(error: unknown, context?: TlsRefusalContext): string {
  const refusal = tlsRefusal(error);
  if (refusal !== null) return `${describeTlsRefusal(refusal, context)} (${driverDescription(error).slice(0, 160)})`;
  return driverDescription(error).slice(0, 200);
}

/** The driver's code and the first line of its message. */
function driverDescription(error: unknown): string {
  const root = driverError(error);
  if (!(root instanceof Error)) return String(root);
  const code = (root as { code?: unknown }).code;
  const inner = (root as { errors?: unknown }).errors;
  const first = Array.isArray(inner) && inner[0] instanceof Error ? inner[0].message : "";
  const message = (root.message || first).split("\n")[0] ?? "";
  return typeof code === "string" && !message.includes(code) ? `${code} ${message}` : message;
}

/** The innermost `cause` (the driver's own error under drizzle's wrapper). */
function driverError(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < maxDepth; depth++) {
    const cause = (current as { cause?: unknown } | null)?.cause;
    if (cause === undefined || cause === null) break;
    current = cause;
  }
  return current;
}
