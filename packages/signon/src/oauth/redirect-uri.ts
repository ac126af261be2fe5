const loopbackHosts = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Why a URI cannot be registered as a redirect URI, or `null` when it can.
 * It must be absolute, without a fragment or a wildcard host, and
 * `https://`; `http://` is allowed for a loopback host only in development
 * (S8).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.1.2
 */
export function redirectUriProblem(uri: string, options: { allowLoopbackHttp: boolean }): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "is not an absolute URI";
  }
  if (uri.includes("#")) return "must not contain a fragment";
  if (url.username || url.password) return "must not contain credentials";
  // Matched exactly (RFC 9700 4.1.3), so a wildcard would stand for nothing but itself.
  if (url.hostname.includes("*")) return "must name its host: wildcards are not supported, each redirect URI is matched exactly";
  if (queryParameterNames(uri).some((name) => authorizationResponseParameters.has(name))) {
    return "must not carry the query parameters code, state or iss, which the authorization response adds";
  }
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && loopbackHosts.has(url.hostname)) {
    return options.allowLoopbackHttp ? null : "must use https (http on a loopback host is allowed in development only)";
  }
  return "must use https";
}

/**
 * Whether a requested `redirect_uri` is one of the registered ones: an exact
 * string comparison, no normalisation (S8).
 *
 * @see https://www.rfc-editor.org/rfc/rfc9700#section-4.1.3
 */
export function isRegisteredRedirectUri(requested: string, registered: readonly string[]): boolean {
  return registered.includes(requested);
}

/** The query parameters that the authorization response adds to the redirect URI. */
const authorizationResponseParameters = new Set(["code", "state", "iss"]);

/**
 * Whether the `redirect_uri` presented at the token endpoint binds to the one
 * of the authorization request: it is the same string, or the same string once
 * the parameters the authorization response added (`code`, `state`, `iss`)
 * are taken out of its query, the rest of the query left exactly as it was.
 * OAuth client libraries that build the value from the URL they were called
 * back on (omniauth-oauth2, so every gds-sso application) send the latter.
 * The authorization endpoint itself keeps the exact match (S8). The redirect
 * carried the URI as the URL parser writes it (see `redirectWithParameters`),
 * so that form binds too.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.3
 */
export function redirectUriBinds(presented: string | undefined, authorized: string): boolean {
  if (presented === undefined) return false;
  if (presented === authorized) return true;
  const stripped = withoutAuthorizationResponseParameters(presented);
  return stripped === authorized || stripped === new URL(authorized).href;
}

/** `uri` with every `code`, `state` and `iss` pair taken out of its query; the other pairs are kept byte for byte. */
export function withoutAuthorizationResponseParameters(uri: string): string {
  const queryStart = uri.indexOf("?");
  if (queryStart === -1) return uri;
  const kept = uri
    .slice(queryStart + 1)
    .split("&")
    .filter((pair) => !authorizationResponseParameters.has(parameterName(pair)));
  const base = uri.slice(0, queryStart);
  return kept.length === 0 ? base : `${base}?${kept.join("&")}`;
}

function queryParameterNames(uri: string): string[] {
  const queryStart = uri.indexOf("?");
  if (queryStart === -1) return [];
  return uri.slice(queryStart + 1).split("&").map(parameterName);
}

function parameterName(pair: string): string {
  const raw = pair.split("=", 1)[0] ?? "";
  try {
    return decodeURIComponent(raw.replaceAll("+", " "));
  } catch {
    return raw;
  }
}
