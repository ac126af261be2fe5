import { OAuthError } from "./errors.js";

/** What goes on the wire for a failed OAuth request. */
export interface OAuthErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: { error: string; error_description?: string };
}

// RFC 6749 §5.2: error_description is limited to %x20-21 / %x23-5B / %x5D-7E.
const disallowedDescriptionCharacters = /[^\x20\x21\x23-\x5b\x5d-\x7e]/g;

/**
 * Turns any thrown value into an RFC 6749 §5.2 error response. OAuth errors
 * keep their code, status, headers and description; anything else becomes a
 * bare `server_error` so that nothing internal reaches the caller.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.2
 */
export function writeOAuthError(error: unknown): OAuthErrorResponse {
  if (!(error instanceof OAuthError)) {
    return { status: 500, headers: { "cache-control": "no-store" }, body: { error: "server_error" } };
  }
  const body: OAuthErrorResponse["body"] = { error: error.code };
  const description = error.description?.replace(disallowedDescriptionCharacters, "?");
  if (description) body.error_description = description;
  return { status: error.status, headers: { "cache-control": "no-store", ...error.headers }, body };
}
