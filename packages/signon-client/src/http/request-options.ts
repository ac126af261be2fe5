import { endpoint } from "@tessera/endpoint";

/**
 * The one place where this package turns a route and options into request
 * options: `endpoint(route, options)` of `@tessera/endpoint`, narrowed to what
 * `fetch` takes (string headers, a string body).
 */

/** What `fetch` needs to send a request to Sign-on. */
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
  /** Query parameters of a GET request. */
  query?: Record<string, string>;
}

/** Builds the request options for `route` (`"POST /token"`) against Sign-on. */
export function signonRequestOptions(route: string, options: SignonRouteOptions): RequestOptions {
  const { query, ...rest } = options;
  const built = endpoint(route, { ...rest, ...query });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(built.headers)) headers[name] = String(value);
  const request: RequestOptions = { method: built.method, url: built.url, headers };
  if (typeof built.body === "string") request.body = built.body;
  return request;
}
