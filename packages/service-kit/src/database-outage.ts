import { describeDatabaseError, isDatabaseUnavailable, transactionConflict } from "@tessera/db/faults";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";

/** What `Retry-After` says while the database is unavailable, in seconds: about how long a restart or failover takes. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * What `Retry-After` says when a transaction was still ended by a deadlock or
 * a serialization failure after `@tessera/db` ran it again a few times, in
 * seconds: the concurrent work it met is usually over by then.
 */
export const CONFLICT_RETRY_AFTER_SECONDS = 1;

/** An error handler as Fastify's `setErrorHandler` takes it. */
export type ErrorHandler = (this: unknown, error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => unknown;

/** How a service writes its 503 while the database is unavailable. */
export interface DatabaseOutageAnswers {
  /** The JSON body of the 503, in the service's own error shape (e.g. `{"detail": …}`). */
  json: (request: FastifyRequest) => unknown;
  /** Whether the request is for a browser page, which gets {@link temporarilyUnavailablePage} instead (default: never). */
  html?: (request: FastifyRequest) => boolean;
}

/** The plain HTML page browsers get while the database is unavailable. */
export const temporarilyUnavailablePage =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Temporarily unavailable</title></head>' +
  "<body><main><h1>Temporarily unavailable</h1>" +
  "<p>This service cannot reach its database at the moment. Please try again in a few seconds.</p>" +
  "</main></body></html>";

/**
 * Answers a request whose work failed because the database is unavailable,
 * or because its transaction kept meeting concurrent ones (`Retry-After`
 * then {@link CONFLICT_RETRY_AFTER_SECONDS}): `503` with `Retry-After` and
 * `Cache-Control: no-store`, the service's JSON error body or the plain "temporarily unavailable" page, and a warning in the
 * log (the driver's code and message only: no SQL, no parameters, no stack).
 */
export function sendDatabaseUnavailable(error: unknown, request: FastifyRequest, reply: FastifyReply, answers: DatabaseOutageAnswers): FastifyReply {
  const conflict = transactionConflict(error);
  if (conflict === null) request.log.warn({ database: describeDatabaseError(error) }, "database unavailable: answered 503");
  else request.log.warn({ database: describeDatabaseError(error), conflict }, "transaction conflict after retries: answered 503");
  const retryAfter = conflict === null ? DATABASE_RETRY_AFTER_SECONDS : CONFLICT_RETRY_AFTER_SECONDS;
  void reply.code(503).header("retry-after", String(retryAfter)).header("cache-control", "no-store");
  if (answers.html?.(request) === true) return reply.type("text/html; charset=utf-8").send(temporarilyUnavailablePage);
  return reply.send(answers.json(request));
}

/**
 * Wraps a service's error handler so that every error meaning "the database
 * cannot be reached now" (`isDatabaseUnavailable` of `@tessera/db`: a lost or
 * refused connection, a server shutting down, a checkout timeout) or "the
 * database could not finish this for concurrent work" (`transactionConflict`:
 * a deadlock or serialization failure that outlasted `@tessera/db`'s runs
 * again) becomes a 503 with `Retry-After` ({@link sendDatabaseUnavailable})
 * instead of a 500, the same way in every service. Every other error goes to
 * `handler`.
 *
 * ```ts
 * app.setErrorHandler(answeringDatabaseOutages(handleError, { json: () => ({ detail: "…" }) }));
 * ```
 */
export function answeringDatabaseOutages(handler: ErrorHandler, answers: DatabaseOutageAnswers): ErrorHandler {
  return function databaseOutageAware(this: unknown, error, request, reply) {
    if (isDatabaseUnavailable(error) || transactionConflict(error) !== null) return sendDatabaseUnavailable(error, request, reply, answers);
    return handler.call(this, error, request, reply);
  };
}
