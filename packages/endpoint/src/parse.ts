import { addLowercaseHeaders } from "./lowercase-headers.js";
import { amendAccept } from "./media-type.js";
import { OPTION_NAMES } from "./option-names.js";
import { queryParameter } from "./query-parameter.js";
import { routeTemplate } from "./route-template.js";
import type { MergedOptions, RequestOptions } from "./types.js";

/**
 * Turns merged options into request options: expands the URL template (RFC
 * 6570, with `:name` placeholders in the path), prefixes `baseUrl` to a path,
 * amends `accept` from `mediaType`, and sends the parameters the URL did not
 * take to the query string (GET, HEAD) or the body (other methods): `data` as
 * it is, else a JSON object of the parameters.
 * `fallbackVendor` names GraphQL previews when `accept` names no vendor.
 * @see https://www.rfc-editor.org/rfc/rfc6570
 */
export function parse(options: MergedOptions, fallbackVendor?: string): RequestOptions {
  const method = options.method.toUpperCase();
  const template = routeTemplate(options.url || "/");
  let url = template.expand(options);
  if (url !== "/" && url.endsWith("/")) url = url.slice(0, -1);
  if (!url.startsWith("http")) url = options.baseUrl + url;

  const headers = addLowercaseHeaders({}, options.headers) as Record<string, string | number>;
  if (typeof headers["accept"] === "string") headers["accept"] = amendAccept(headers["accept"], options.mediaType ?? {}, url, fallbackVendor);

  const sendsQuery = method === "GET" || method === "HEAD";
  let query = "";
  let parameters: Record<string, unknown> | undefined;
  let body: unknown;
  for (const key of Object.keys(options)) {
    const value = options[key];
    if (value === undefined || key === "__proto__" || OPTION_NAMES.has(key) || template.variableNames.includes(key)) continue;
    if (sendsQuery) query += (query === "" ? "" : "&") + queryParameter(key, value);
    else if (key === "data") {
      body = value;
      break;
    } else (parameters ??= {})[key] = value;
  }
  if (query !== "") url += (url.includes("?") ? "&" : "?") + query;
  if (body === undefined) body = parameters;
  if (body !== undefined) headers["content-type"] ||= "application/json; charset=utf-8";
  else if (method === "PATCH" || method === "PUT") body = "";

  const result: RequestOptions = { method, url, headers };
  if (body !== undefined) result.body = body;
  if (options.request) result.request = options.request;
  return result;
}
