import type { FastifyReply } from "fastify";

/**
 * The JSON errors of the API side. `error` is a stable code; the
 * `WWW-Authenticate` header follows RFC 6750 §3.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3
 */
export const apiErrors = {
  missing_token: {
    status: 401,
    challenge: "Bearer",
    description: "This request needs an Authorization: Bearer token.",
  },
  invalid_request: {
    status: 400,
    challenge: 'Bearer error="invalid_request"',
    description: "The Authorization header names the Bearer scheme but holds no well-formed token (RFC 6750 section 2.1).",
  },
  invalid_token: {
    status: 401,
    challenge: 'Bearer error="invalid_token"',
    description: "The bearer token is invalid, expired or revoked.",
  },
  insufficient_scope: {
    status: 403,
    challenge: 'Bearer error="insufficient_scope"',
    description: "The bearer token's user lacks the permission this request needs.",
  },
  temporarily_unavailable: {
    status: 503,
    challenge: null,
    description: "Sign-on cannot check the bearer token right now; try again later.",
  },
} as const;

export type ApiErrorCode = keyof typeof apiErrors;

/** Sends one of `apiErrors` as `{"error","error_description"}`. */
export function sendApiError(reply: FastifyReply, code: ApiErrorCode, description?: string): FastifyReply {
  const error = apiErrors[code];
  if (error.challenge !== null) reply.header("www-authenticate", error.challenge);
  if (error.status === 503) reply.header("retry-after", "5");
  return reply
    .code(error.status)
    .header("cache-control", "no-store")
    .send({ error: code, error_description: description ?? error.description });
}
