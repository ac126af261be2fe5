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
  /** The OpenID Connect part, when `scope` holds `openid`; `null` for a plain OAuth 2 (draft-22) request. */
  openid: OpenIdRequest | null;
}

/** The OpenID Connect parameters of an authorization request (Core 1.0 §3.1.2.1). */
export interface OpenIdRequest {
  /** The granted scopes: those asked for that the application may have, `openid` first. */
  scopes: string[];
  nonce: string | null;
  /** `prompt` values (`none` alone, or among `login`, `consent`, `select_account`). */
  prompt: string[];
  /** `max_age` in seconds. */
  maxAge: number | null;
  loginHint: string | null;
  /** Set by Sign-on on the request it comes back to after a forced sign-in: the session must have started at or after this (seconds). */
  authenticatedAfter: number | null;
}

/** The parameter Sign-on adds to an authorization request after forcing a new sign-in (`prompt=login`, `max_age`). */
export const authenticatedAfterParameter = "signon_authenticated_after";

const promptValues = new Set(["none", "login", "consent", "select_account"]);

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

  const openid = readOpenIdRequest(query, application);
  if (typeof openid === "string") return fail(openIdErrorCodes[openid] ?? "invalid_request", openIdProblems[openid]);

  return { kind: "valid", request: { application, redirectUri, redirectUriSent: "value" in redirect, state, codeChallenge, openid } };
}

const openIdErrorCodes: Partial<Record<keyof typeof openIdProblems, string>> = {
  scope: "invalid_scope",
  request: "request_not_supported",
  request_uri: "request_uri_not_supported",
};

const openIdProblems = {
  scope: "This application is not registered for OpenID Connect (scope openid)",
  prompt: "prompt must be given once: none alone, or among login, consent and select_account",
  max_age: "max_age must be given once, as a whole number of seconds",
  nonce: "nonce is too long",
  login_hint: "login_hint must be given once, at most 254 characters",
  request: "Request objects (request) are not supported, nor a repeated request parameter",
  request_uri: "Request objects by reference (request_uri) are not supported, nor a repeated request_uri parameter",
  authenticated_after: `${authenticatedAfterParameter} is not valid`,
} as const;

/**
 * The OpenID Connect parameters, when `scope` holds `openid`: `null` when it
 * does not (the request is plain OAuth 2, as before), or the name of the
 * problem. Scopes the application may not have are left out (Core §3.1.2.1).
 *
 * @see https://openid.net/specs/openid-connect-core-1_0.html#AuthRequest
 */
function readOpenIdRequest(query: Readonly<Record<string, unknown>>, application: Application): OpenIdRequest | keyof typeof openIdProblems | null {
  const scope = singleField(query, "scope");
  const asked = "value" in scope ? scope.value.split(" ").filter((value) => value !== "") : [];
  if (!asked.includes("openid")) return null;
  if (!application.oidcScopes.includes("openid")) return "scope";
  for (const name of ["prompt", "max_age", "login_hint", "request", "request_uri", authenticatedAfterParameter] as const) {
    if ("duplicated" in singleField(query, name)) return name === authenticatedAfterParameter ? "authenticated_after" : name;
  }
  if ("value" in singleField(query, "request")) return "request";
  if ("value" in singleField(query, "request_uri")) return "request_uri";
  const scopes = ["openid", ...application.oidcScopes.filter((value) => value !== "openid" && asked.includes(value))];
  const nonce = singleField(query, "nonce");
  if ("value" in nonce && nonce.value.length > 512) return "nonce";
  const promptField = singleField(query, "prompt");
  const prompt = "value" in promptField ? promptField.value.split(" ").filter((value) => value !== "") : [];
  if (prompt.some((value) => !promptValues.has(value)) || (prompt.includes("none") && prompt.length > 1)) return "prompt";
  const maxAgeField = singleField(query, "max_age");
  let maxAge: number | null = null;
  if ("value" in maxAgeField) {
    if (!/^[0-9]{1,9}$/.test(maxAgeField.value)) return "max_age";
    maxAge = Number(maxAgeField.value);
  }
  const loginHint = singleField(query, "login_hint");
  if ("value" in loginHint && loginHint.value.length > 254) return "login_hint";
  const afterField = singleField(query, authenticatedAfterParameter);
  let authenticatedAfter: number | null = null;
  if ("value" in afterField) {
    if (!/^[0-9]{1,12}$/.test(afterField.value)) return "authenticated_after";
    authenticatedAfter = Number(afterField.value);
  }
  return {
    scopes,
    nonce: "value" in nonce && nonce.value !== "" ? nonce.value : null,
    prompt,
    maxAge,
    loginHint: "value" in loginHint && loginHint.value !== "" ? loginHint.value : null,
    authenticatedAfter,
  };
}
