import { InvalidClientError, InvalidRequestError } from "./errors.js";

/** The client id and secret a request presented, and how. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  method: "client_secret_basic" | "client_secret_post";
}

/** The parts of a request that can carry client credentials. */
export interface CredentialSources {
  authorization: string | undefined;
  body: { client_id?: string | undefined; client_secret?: string | undefined };
}

const maxCredentialLength = 512;

/**
 * Reads client credentials from HTTP Basic or from the form body, never both.
 * Basic credentials are form-urlencoded before base64 encoding (RFC 6749
 * §2.3.1), so `%3A` in an id or secret is a colon. A malformed Basic header is
 * a failed authentication (401 with `WWW-Authenticate: Basic`).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1
 */
export function readClientCredentials({ authorization, body }: CredentialSources): ClientCredentials {
  const basic = authorization !== undefined && /^basic(\s|$)/i.test(authorization);
  if (!basic) {
    if (authorization !== undefined) {
      throw new InvalidClientError("Unsupported client authentication method");
    }
    if (body.client_id === undefined || body.client_id === "") {
      throw new InvalidClientError("Client authentication is required");
    }
    if (body.client_secret === undefined || body.client_secret === "") {
      throw new InvalidClientError("client_secret is required");
    }
    return { clientId: body.client_id, clientSecret: body.client_secret, method: "client_secret_post" };
  }

  const fromHeader = parseBasic(authorization);
  if (body.client_secret !== undefined) {
    throw new InvalidRequestError("Use one client authentication method, not two");
  }
  if (body.client_id !== undefined && body.client_id !== fromHeader.clientId) {
    throw new InvalidRequestError("client_id does not match the Authorization header");
  }
  return fromHeader;
}

function parseBasic(header: string): ClientCredentials {
  const fail = (): never => {
    throw new InvalidClientError("Malformed Basic credentials", { usedBasic: true });
  };
  const encoded = header.slice("basic".length).trim();
  if (encoded === "" || encoded.length > 4 * maxCredentialLength || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    return fail();
  }
  let decoded: string;
  try {
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(encoded, "base64"));
  } catch {
    return fail();
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return fail();
  const clientId = formUnescape(decoded.slice(0, colon)) ?? fail();
  const clientSecret = formUnescape(decoded.slice(colon + 1)) ?? fail();
  if (clientId === "" || clientSecret === "") return fail();
  return { clientId, clientSecret, method: "client_secret_basic" };
}

function formUnescape(value: string): string | null {
  try {
    const decoded = decodeURIComponent(value.replace(/\+/g, " "));
    return decoded.includes("\u0000") ? null : decoded;
  } catch {
    return null;
  }
}
