import { connectionTls } from "./connection-tls.js";
import { describeDatabaseError, tlsRefusal } from "./faults.js";

/**
 * The database of a connection string cannot be used as configured: the
 * server refuses the login (wrong user or password, no `pg_hba.conf` entry),
 * the database does not exist, the user lacks a privilege the migrations
 * need, TLS is required and not asked for, asked for and not offered, or a
 * certificate does not verify; or a TLS file the connection string names
 * cannot be read. Waiting does not help; the
 * message says what is wrong in one sentence, for a service to print before
 * it exits (no stack trace: nothing in the code is at fault).
 */
export class DatabaseStartError extends Error {
  override readonly name = "DatabaseStartError";
}

/** SQLSTATEs of a configuration mistake, with what to do about it. */
const configurationMistakes: { test: (code: string) => boolean; hint: (where: DatabaseAddress, setting: string) => string }[] = [
  { test: (code) => code.startsWith("28"), hint: (where, setting) => `check the user (${where.user}) and password in ${setting} and the server's pg_hba.conf` },
  { test: (code) => code === "3D000", hint: (where, setting) => `create the database ${where.database} or fix its name in ${setting}` },
  { test: (code) => code === "42501", hint: (where) => `grant ${where.user} the privileges its migrations need (create schemas and tables in ${where.database})` },
];

/** Where a connection string points, without its password. */
export interface DatabaseAddress {
  /** `host:port`, or the socket folder and port. */
  server: string;
  database: string;
  user: string;
}

/** The server, database and user of `url`, for messages (never the password). */
export function databaseAddress(url: string): DatabaseAddress {
  try {
    const parsed = new URL(url);
    const port = parsed.port || "5432";
    const socketFolder = parsed.searchParams.get("host");
    const host = socketFolder !== null && socketFolder.startsWith("/") ? socketFolder : parsed.hostname || "localhost";
    return {
      server: `${host}:${port}`,
      database: decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username) || "postgres",
      user: decodeURIComponent(parsed.username) || "the default user",
    };
  } catch {
    return { server: "the server of DATABASE_URL", database: "of DATABASE_URL", user: "of DATABASE_URL" };
  }
}

/**
 * The {@link DatabaseStartError} for `error` met while opening the database of
 * `url` (the value of `setting`, named in the message), when it is a
 * configuration mistake; otherwise `null` (a bug, or an outage, which is
 * waited out). A refusal over TLS is one sentence saying what to set
 * ("PostgreSQL at db.internal:5432 accepts only TLS connections: add
 * sslmode=verify-full and sslrootcert=… to DATABASE_URL (…)."), although
 * `isDatabaseUnavailable` counts it as an outage once the service runs.
 */
export function configurationMistake(error: unknown, url: string, setting = "DATABASE_URL"): DatabaseStartError | null {
  const where = databaseAddress(url);
  if (tlsRefusal(error) !== null) {
    const sentence = describeDatabaseError(error, { server: where.server, setting, rootCert: connectionTls(url).rootCert });
    return new DatabaseStartError(`${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`);
  }
  const root = innermost(error);
  const code = typeof (root as { code?: unknown }).code === "string" ? ((root as { code: string }).code) : "";
  const mistake = configurationMistakes.find((candidate) => code !== "" && candidate.test(code));
  if (mistake === undefined) return null;
  return new DatabaseStartError(`The database ${where.database} at ${where.server} cannot be used as ${where.user}: ${describeDatabaseError(error)}; ${mistake.hint(where, setting)}.`);
}

function innermost(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < 5; depth++) {
    const cause = (current as { cause?: unknown } | null)?.cause;
    if (cause === undefined || cause === null) break;
    current = cause;
  }
  return current;
}
