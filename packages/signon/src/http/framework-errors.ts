import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { writeOAuthError } from "../oauth/error-response.js";
import { InvalidRequestError } from "../oauth/errors.js";

/**
 * The router's own refusals, before any route or plugin runs: an address
 * whose path is not valid percent-encoded UTF-8 (`FST_ERR_BAD_URL`, 400) or
 * has a parameter longer than `maxParamLength` (`FST_ERR_MAX_PARAM_LENGTH`,
 * 414). Answered as `invalid_request` like every other malformed request,
 * instead of Fastify's default body, which echoes the address, query string
 * (and so any `access_token` in it) included.
 */
export function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const tooLong = error.code === "FST_ERR_MAX_PARAM_LENGTH";
  const wire = writeOAuthError(new InvalidRequestError(tooLong ? "A part of the address is too long" : "The address has a malformed percent-escape or invalid UTF-8"));
  void reply.code(tooLong ? 414 : wire.status).headers(wire.headers).send(wire.body);
}
