import type { FastifyReply, FastifyRequest } from "fastify";
import { SignonUnavailableError, StoreUnavailableError } from "../errors.js";
import { sendPage } from "./pages.js";

/** What `Retry-After` says when Sign-on or the store cannot be reached, in seconds. */
export const RETRY_AFTER_SECONDS = 5;

/** Whether `error` means "try again later": Sign-on or the session and user store cannot be reached. */
export function isTemporarilyUnavailable(error: unknown): error is SignonUnavailableError | StoreUnavailableError {
  return error instanceof SignonUnavailableError || error instanceof StoreUnavailableError;
}

/**
 * Answers a request that failed because Sign-on or the store cannot be
 * reached: 503 with `Retry-After`, as a plain page for browsers (an `Accept`
 * naming `text/html`) and as `{"error":"temporarily_unavailable",…}` otherwise.
 */
export function sendTemporarilyUnavailable(request: FastifyRequest, reply: FastifyReply, error: SignonUnavailableError | StoreUnavailableError): FastifyReply {
  const what = error instanceof StoreUnavailableError ? "its session store" : "Sign-on";
  request.log.warn({ reason: error.message }, `answered 503: ${what} unavailable`);
  void reply.header("retry-after", String(RETRY_AFTER_SECONDS));
  if ((request.headers.accept ?? "").includes("text/html")) {
    return sendPage(reply, 503, "Temporarily unavailable", "<p>Signing in is not possible at the moment. Please try again in a few seconds.</p>");
  }
  return reply
    .code(503)
    .header("cache-control", "no-store")
    .send({ error: "temporarily_unavailable", error_description: `This application cannot reach ${what} right now; try again shortly.` });
}
