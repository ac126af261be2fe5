/**
 * Sign-on answered, but refused: an RFC 6749 §5.2 error such as `invalid_grant`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.2
 */
export class SignonRefusedError extends Error {
  override readonly name = "SignonRefusedError";
  constructor(
    readonly error: string,
    readonly status: number,
  ) {
    super(`Sign-on refused the request: ${error} (HTTP ${status})`);
  }
}

/**
 * Sign-on could not be reached or gave an answer this client cannot use
 * (network error, 5xx, a body of the wrong shape). Worth trying again later.
 */
export class SignonUnavailableError extends Error {
  override readonly name = "SignonUnavailableError";
  /** The HTTP status Sign-on (or a proxy in front of it) answered with; absent when no answer came. */
  readonly status: number | undefined;

  constructor(message: string, options: { status?: number } = {}) {
    super(message);
    this.status = options.status;
  }
}

/** The callback of a sign-in did not match the sign-in this browser started. */
export class SignInRejectedError extends Error {
  override readonly name = "SignInRejectedError";
  constructor(readonly reason: "no_sign_in_started" | "state_mismatch" | "authorization_denied" | "missing_code") {
    super(`Sign-in rejected: ${reason}`);
  }
}

/**
 * The session or user store cannot reach its storage right now (the
 * PostgreSQL stores throw it while their database is unreachable; a store of
 * your own may too). The plugin answers it with 503 and `Retry-After`, as it
 * does `SignonUnavailableError`. Worth trying again later.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
}
