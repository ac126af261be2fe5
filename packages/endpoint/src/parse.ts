import { addLowercaseHeaders } from "./lowercase-headers.js";
import { amendAccept } from "./media-type.js";
import { isOptionName } from "./option-names.js";
import { queryParameter } from "./query-parameter.js";
import { routeTemplate } from "./route-template.js";
import type { MergedOptions, RequestOptions } from "./types.js";

/** Whether `key` is a parameter left over after the URL template took its variables. */
function isLeftover(key: string, value: unknown, variableNames: readonly string[]): boolean {
  return value !== undefined && key !== "__proto__" && !isOptionName(key) && !variableNames.includes(key);
}

/** `url` with the leftover parameters appended as its query string. */
function withQuery(url: string, options: MergedOptions, variableNames: readonly string[]): string {
  let query = "";
  for (const key of Object.keys(options)) {
    const value = options[key];
    if (isLeftover(key, value, variableNames)) query += (query === "" ? "" : "&") + queryParameter(key, value);
  }
  if (query === "") return url;
  return url + (url.includes("?") ? "&" : "?") + query;
}

/** The request body: `data` when given, else the leftover parameters as an object, else nothing. */
function bodyOf(options: MergedOptions, variableNames: readonly string[]): unknown {
  let parameters: Record<string, unknown> | undefined;
  for (const key of Object.keys(options)) {
    const value = options[key];
    if (!isLeftover(key, value, variableNames)) continue;
    if (key === "data") return value;
    (parameters ??= {})[key] = value;
  }
  return parameters;
}

/**
 * Turns merged options into request options: expands the URL template (RFC
 * 6570, with `:name` placeholders in the path), prefixes `baseUrl` to a path,
 * amends `accept` from `mediaType`, and sends the parameters the URL did not
 * take to the query string (GET, HEAD) or the JSON body (other methods).
 * @see https://www.rfc-editor.org/rfc/rfc6570
 */
export function parse(options: MergedOptions): RequestOptions {
  const method = options.method.toUpperCase();
  const route = routeTemplate(options.url || "/");
  let url = route.expand(options);
  if (url !== "/" && url.endsWith("/")) url = url.slice(0, -1);
  if (!url.startsWith("http")) url = options.baseUrl + url;

  const headers = addLowercaseHeaders({}, options.headers) as Record<string, string | number>;
  if (typeof headers["accept"] === "string") headers["accept"] = amendAccept(headers["accept"], options.mediaType ?? {}, url);

  let body: unknown;
  if (method === "GET" || method === "HEAD") url = withQuery(url, options, route.variableNames);
  else body = bodyOf(options, route.variableNames);
  if (body !== undefined && !headers["content-type"]) headers["content-type"] = "application/json; charset=utf-8";
  if (body === undefined && (method === "PATCH" || method === "PUT")) body = "";

  const result: RequestOptions = { method, url, headers };
  if (body !== undefined) result.body = body;
  if (options.request) result.request = options.request;
  return result;
}
