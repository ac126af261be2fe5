import type { SignonContext } from "../context.js";
import { singleField } from "../http/query-fields.js";
import { findApplicationByClientId, type Application } from "../repositories/applications.js";
import { isS256Challenge } from "./pkce.js";
import { isRegisteredRedirectUri } from "./redirect-uri.js";

/** A valid authorization request. */
export interface AuthorizationRequest {
  application: Application;
  redirectUri: string;
  /** Whether the client sent `redirect_uri` (then the token request must repeat it). */
  redirectUriSent: boolean;
  state: string;
  codeChallenge: string | null;
}

/**
 * Checking an authorization request ends in one of three ways: valid; an
 * error shown on our own page (the client or redirect URI cannot be trusted,
 * or `state` is missing); or an error sent back to the client's redirect URI.
 */
export type AuthorizationRequestCheck =
  | { kind: "valid"; request: AuthorizationRequest }
  | { kind: "error-page"; message: string }
  | { kind: "error-redirect"; redirectUri: string; state: string; error: string; description: string };

const maxParameterLength = 2048;

/**
 * Checks `GET /oauth/authorize` parameters: client, exact redirect URI (S8),
 * `state` (S7), `response_type=code` and optional S256 PKCE (S6).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2.1
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.3
 */
export async function checkAuthorizationRequest(
  ctx: SignonContext,
  query: Readonly<Record<string, unknown>>,
): Promise<AuthorizationRequestCheck> {
  const clientId = singleField(query, "client_id");
  if (!("value" in clientId) || clientId.value === "" || clientId.value.length > maxParameterLength) {
    return { kind: "error-page", message: "The request does not name exactly one client (client_id)." };
  }
  const application = await findApplicationByClientId(ctx.db, clientId.value);
  if (!application || application.retired) return { kind: "error-page", message: "The application is not known." };
  if (application.apiOnly) {
    return { kind: "error-page", message: `${application.name} is used by API users only: nobody signs in to it through Sign-on.` };
  }

  const redirect = singleField(query, "redirect_uri");
  if ("duplicated" in redirect) return { kind: "error-page", message: "redirect_uri is repeated." };
  let redirectUri: string;
  if ("value" in redirect) {
    if (!isRegisteredRedirectUri(redirect.value, application.redirectUris)) {
      return { kind: "error-page", message: `The redirect URI is not registered for ${application.name}.` };
    }
    redirectUri = redirect.value;
  } else {
    const [only, ...others] = application.redirectUris;
    if (only === undefined || others.length > 0) {
      return { kind: "error-page", message: `${application.name} has several redirect URIs; the request must name one (redirect_uri).` };
    }
    redirectUri = only;
  }

  const stateField = singleField(query, "state");
  if (!("value" in stateField) || stateField.value === "" || stateField.value.length > maxParameterLength) {
    return { kind: "error-page", message: "The request has no valid state parameter, which protects against cross-site request forgery." };
  }
  const state = stateField.value;
  const fail = (error: string, description: string): AuthorizationRequestCheck => ({ kind: "error-redirect", redirectUri, state, error, description });

  for (const name of ["response_type", "code_challenge", "code_challenge_method", "scope", "nonce"]) {
    if ("duplicated" in singleField(query, name)) return fail("invalid_request", `${name} is repeated`);
  }
  const responseType = singleField(query, "response_type");
  if (!("value" in responseType)) return fail("invalid_request", "response_type is required");
  if (responseType.value !== "code") return fail("unsupported_response_type", "Only response_type=code is supported");

  const challenge = singleField(query, "code_challenge");
  const method = singleField(query, "code_challenge_method");
  let codeChallenge: string | null = null;
  if ("value" in challenge) {
    if (!("value" in method) || method.value !== "S256") return fail("invalid_request", "code_challenge_method must be S256");
    if (!isS256Challenge(challenge.value)) return fail("invalid_request", "code_challenge is not a valid S256 challenge");
    codeChallenge = challenge.value;
  } else if ("value" in method) {
    return fail("invalid_request", "code_challenge_method was sent without code_challenge");
  }
  if (application.requirePkce && codeChallenge === null) return fail("invalid_request", "This application requires PKCE (code_challenge)");

  return { kind: "valid", request: { application, redirectUri, redirectUriSent: "value" in redirect, state, codeChallenge } };
}
