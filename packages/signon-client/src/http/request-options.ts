/**
 * The one place where this package turns a route and options into request
 * options. It follows the `endpoint(route, options)` API of `@tessera/endpoint`
 * (the `@octokit/endpoint` call signature).
 */

/** What `endpoint()` returns and `fetch` needs. */
export interface RequestOptions {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** The options this package passes: a base URL, headers and an optional raw body. */
export interface SignonRouteOptions {
  baseUrl: string;
  headers: Record<string, string>;
  /** A raw request body (already encoded), sent as is. */
  data?: string;
}

/**
 * Builds the request options for `route` (`"POST /token"`) against Sign-on.
 *
 * Interim implementation of the subset of `endpoint()` used here (no URL
 * templates, raw `data` body), until `@tessera/endpoint` is available.
 */
export function signonRequestOptions(route: string, options: SignonRouteOptions): RequestOptions {
  const [method = "GET", path = "/"] = route.split(" ");
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers)) headers[name.toLowerCase()] = value;
  const url = `${options.baseUrl.replace(/\/+$/, "")}${path}`;
  return options.data === undefined
    ? { method: method.toUpperCase(), url, headers }
    : { method: method.toUpperCase(), url, headers, body: options.data };
}
