import { answeringDatabaseOutages } from "@tessera/service-kit";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { SignonUnavailableError } from "../auth/signon-caller-resolver.js";

/** An API refusal: an HTTP status and the `detail` text of its `{"detail": …}` body. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly statusCode: 400 | 401 | 403 | 404 | 415 | 503,
    readonly detail: string,
    /** The `WWW-Authenticate` challenge of a 401. */
    readonly challenge?: string,
  ) {
    super(detail);
  }
}

/** 400 with a detail. */
export const badRequest = (detail: string): ApiError => new ApiError(400, detail);
/** 403 with a detail. */
export const forbidden = (detail = "You do not have permission to perform this action."): ApiError => new ApiError(403, detail);
/** 404 with a detail. */
export const notFound = (detail = "Not found."): ApiError => new ApiError(404, detail);

/** The body of a 503 while the database cannot be reached. */
export const DATABASE_UNAVAILABLE_DETAIL = "The database is unavailable; try again later.";

/**
 * Writes every error as `{"detail": …}`: API refusals with their status,
 * request validation failures as 400, a body that is not JSON as 400, a
 * database that cannot be reached as 503 with `Retry-After`, and anything
 * unexpected as a 500 that says nothing about the inside. A path no route
 * serves is a 404 before its body is read, whatever the body's type, coding
 * or content.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(answeringDatabaseOutages(handleError, { json: () => ({ detail: DATABASE_UNAVAILABLE_DETAIL }) }));
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: "Not found." }));
  // A callback, not an async hook: it runs on every request, and costs no promise there.
  app.addHook("onRequest", (request, reply, done) => {
    if (request.is404) void reply.code(404).send({ detail: "Not found." });
    else done();
  });
}

function handleError(thrown: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const error = thrown as FastifyError;
  if (error instanceof ApiError) {
    if (error.challenge !== undefined) void reply.header("www-authenticate", error.challenge);
    return reply.code(error.statusCode).send({ detail: error.detail });
  }
  if (error instanceof SignonUnavailableError) {
    request.log.warn({ err: error }, "sign-on unavailable");
    return reply.code(503).header("retry-after", "5").send({ detail: "The sign-on service is unavailable; try again later." });
  }
  if (error.validation) {
    return reply.code(400).send({ detail: `Invalid ${error.validationContext ?? "request"}: ${error.message}` });
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return reply.code(status).send({ detail: error.message });
  request.log.error({ err: error }, "unexpected error");
  return reply.code(500).send({ detail: "Internal server error." });
}
