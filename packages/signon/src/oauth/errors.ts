/**
 * OAuth 2 protocol errors. Each class carries the registered error code, the
 * HTTP status it is sent with and a description that is safe to show to the
 * caller. `writeOAuthError` (./error-response.ts) turns any of them into the
 * wire body; anything that is not an `OAuthError` becomes `server_error`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.2
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export abstract class OAuthError extends Error {
  /** Registered error code, e.g. `invalid_grant`. */
  abstract readonly code: string;
  /** HTTP status the error is sent with. */
  abstract readonly status: number;
  /** Extra response headers (`WWW-Authenticate`, `Retry-After`). */
  readonly headers: Record<string, string> = {};

  /** @param description shown to the caller; reduced to the ASCII subset RFC 6749 allows. */
  constructor(readonly description?: string) {
    super(description);
    this.name = new.target.name;
  }
}

/** The request is missing a parameter, repeats one, or is otherwise malformed. */
export class InvalidRequestError extends OAuthError {
  readonly code = "invalid_request";
  readonly status = 400;
}

/**
 * Client authentication failed. Sent with `WWW-Authenticate: Basic` when the
 * client tried HTTP Basic.
 */
export class InvalidClientError extends OAuthError {
  readonly code = "invalid_client";
  readonly status = 401;
  constructor(description?: string, options: { usedBasic?: boolean } = {}) {
    super(description);
    if (options.usedBasic) this.headers["www-authenticate"] = 'Basic realm="signon", charset="UTF-8"';
  }
}

/** The code or refresh token is invalid, expired, revoked, used, or bound to another client. */
export class InvalidGrantError extends OAuthError {
  readonly code = "invalid_grant";
  readonly status = 400;
}

/** The client may not use this grant type. */
export class UnauthorizedClientError extends OAuthError {
  readonly code = "unauthorized_client";
  readonly status = 400;
}

/** `grant_type` names a grant the server does not support. */
export class UnsupportedGrantTypeError extends OAuthError {
  readonly code = "unsupported_grant_type";
  readonly status = 400;
}

/** `token_type_hint` at the revocation endpoint names an unsupported type. */
export class UnsupportedTokenTypeError extends OAuthError {
  readonly code = "unsupported_token_type";
  readonly status = 400;
}

/**
 * Too many failed client authentications: sent with `Retry-After`. RFC 6749
 * registers no code for this; `temporarily_unavailable` is the registered
 * code whose meaning ("try again later") fits.
 */
export class TooManyAttemptsError extends OAuthError {
  readonly code = "temporarily_unavailable";
  readonly status = 429;
  constructor(retryAfterSeconds: number) {
    super("Too many failed attempts; try again later");
    this.headers["retry-after"] = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  }
}

/**
 * A bearer token is missing, expired, revoked or not valid for the resource.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3
 */
export class InvalidTokenError extends OAuthError {
  readonly code = "invalid_token";
  readonly status = 401;
  constructor(description?: string) {
    super(description);
    this.headers["www-authenticate"] = 'Bearer realm="signon", error="invalid_token"';
  }
}

/** The server failed; the description never carries internal detail. */
export class ServerError extends OAuthError {
  readonly code = "server_error";
  readonly status = 500;
}
