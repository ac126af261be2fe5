import { InvalidRequestError, InvalidTokenError } from "./errors.js";

/**
 * Reads the bearer token of a resource request: the `Authorization: Bearer`
 * header (preferred) or the `access_token` parameter (S11). Sending it more
 * than one way is `invalid_request`; sending none is `invalid_token`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-2
 */
export function readBearerToken(authorization: string | undefined, parameter: unknown): string {
  const fromParameter = Array.isArray(parameter) ? parameter : parameter === undefined ? [] : [parameter];
  if (fromParameter.length > 1) throw new InvalidRequestError("access_token is repeated");
  if (authorization !== undefined) {
    if (fromParameter.length > 0) throw new InvalidRequestError("Send the access token one way only");
    const match = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization);
    if (!match?.[1]) throw new InvalidTokenError("Malformed Authorization header");
    return match[1];
  }
  const [token] = fromParameter;
  if (typeof token !== "string" || token === "") throw new InvalidTokenError("An access token is required");
  return token;
}
