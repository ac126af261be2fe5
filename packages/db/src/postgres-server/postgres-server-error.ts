/** What went wrong when the embedded PostgreSQL server could not be set up, started or stopped. */
export type PostgresServerProblem =
  | "no-binaries"
  | "already-running"
  | "wrong-owner"
  | "not-a-data-directory"
  | "other-version"
  | "unreachable-directory"
  | "unreachable-binaries"
  | "no-server-user"
  | "port-taken"
  | "failed";

/**
 * An error whose message is one sentence for a person, ending with what to do
 * about it (often: point `DATABASE_URL` at a PostgreSQL server instead).
 * `problem` tells callers which case it is without parsing the message.
 */
export class PostgresServerError extends Error {
  override name = "PostgresServerError";

  constructor(
    readonly problem: PostgresServerProblem,
    message: string,
  ) {
    super(message);
  }
}

/** The advice that ends most messages. */
export const USE_DATABASE_URL = "or set DATABASE_URL to a PostgreSQL server (version 15 or later)";
