import type { FastifyRequest } from "fastify";
import type { CallerResolver, SignonCaller } from "../auth/caller.js";
import { ApiError } from "./errors.js";

const BEARER = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i;

/**
 * The caller of a request (C7): the `Authorization: Bearer` token resolved
 * through Sign-on. No token, or one Sign-on refuses: 401.
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-2.1
 */
export async function authenticate(request: FastifyRequest, callers: CallerResolver): Promise<SignonCaller> {
  const header = request.headers.authorization;
  // RFC 6750 §3.1: no error code when the request carries no credentials at all.
  if (header === undefined) throw new ApiError(401, "Authentication credentials were not provided.", "Bearer");
  const token = BEARER.exec(header)?.[1];
  if (token === undefined) throw new ApiError(401, "Invalid token header.", 'Bearer error="invalid_request"');
  const caller = await callers.resolveCaller(token);
  if (!caller) throw new ApiError(401, "Invalid token.", 'Bearer error="invalid_token"');
  return caller;
}
