import type { FastifyInstance } from "fastify";
import { InvalidRequestError } from "../oauth/errors.js";
import { MalformedFormError, parseFormBody, type FormFields } from "./form-body.js";

/** Largest request body accepted anywhere, in bytes. */
export const bodyLimitBytes = 16 * 1024;

/**
 * Registers the strict `application/x-www-form-urlencoded` parser: UTF-8
 * only (a different charset is refused), repeated names kept as arrays.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#appendix-B
 */
export function registerFormParser(app: FastifyInstance): void {
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "buffer", bodyLimit: bodyLimitBytes }, (request, body, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers["content-type"] ?? "")?.[1];
    if (charset !== undefined && charset.toLowerCase() !== "utf-8") {
      done(new InvalidRequestError("Form bodies must be UTF-8"), undefined);
      return;
    }
    try {
      done(null, parseFormBody(body as Buffer));
    } catch (error) {
      done(error instanceof MalformedFormError ? new InvalidRequestError(error.message) : (error as Error), undefined);
    }
  });
}

const malformedQuery = Symbol("malformedQuery");

/**
 * The query string parser: the same strict decoding as form bodies. It may not
 * throw (it runs inside routing), so a malformed query is flagged and refused
 * by `rejectMalformedQuery`.
 */
export function parseQueryString(query: string): FormFields {
  try {
    return parseFormBody(query);
  } catch (error) {
    const flagged = Object.create(null) as FormFields & { [malformedQuery]?: string };
    flagged[malformedQuery] = error instanceof MalformedFormError ? error.problem : "is malformed";
    return flagged;
  }
}

/** `onRequest` hook: refuses a request whose query string `parseQueryString` flagged, saying what is wrong with it. */
export function rejectMalformedQuery(request: { query: unknown }, _reply: unknown, done: (error?: Error) => void): void {
  const problem = (request.query as { [malformedQuery]?: string } | undefined)?.[malformedQuery];
  if (problem !== undefined) done(new InvalidRequestError(`The query string ${problem}`));
  else done();
}

/** The error for a body that is not `application/x-www-form-urlencoded`, or `undefined` for one that is. */
function formBodyError(request: { headers: Record<string, unknown>; body: unknown }): InvalidRequestError | undefined {
  const type = String(request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded" && typeof request.body === "object" && request.body !== null) return undefined;
  return new InvalidRequestError("The body must be application/x-www-form-urlencoded");
}

/** Refuses a body that is not `application/x-www-form-urlencoded`. */
export function assertFormBody(request: { headers: Record<string, unknown>; body: unknown }): void {
  const error = formBodyError(request);
  if (error) throw error;
}

/** `preValidation` hook for endpoints that take form bodies only ({@link assertFormBody}). */
export function requireFormBody(request: { headers: Record<string, unknown>; body: unknown }, _reply: unknown, done: (error?: Error) => void): void {
  done(formBodyError(request));
}
