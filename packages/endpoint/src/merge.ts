import { boundedCache } from "./bounded-cache.js";
import { addLowercaseHeaders } from "./lowercase-headers.js";
import { isPlainObject, mergeDeep } from "./merge-deep.js";
import type { EndpointOptions, MediaType, MergedOptions, RequestHeaders } from "./types.js";

/**
 * GraphQL calls combine the default previews with their own, named without
 * the `-preview` suffix (`@octokit/endpoint` behaviour). A fresh `mediaType`
 * object is built so the defaults are never changed.
 */
function graphqlMediaType(defaults: MergedOptions, merged: Record<string, unknown>): MediaType {
  const mediaType: MediaType = Object.assign({}, isPlainObject(merged["mediaType"]) ? merged["mediaType"] : {});
  const own = mediaType.previews ?? [];
  const inherited = defaults.mediaType.previews ?? [];
  mediaType.previews = inherited
    .filter((preview) => !own.includes(preview))
    .concat(own)
    .map((preview) => preview.replace("-preview", ""));
  return mediaType;
}

/** The words of a route; routes are usually constants, so each is split once. */
const routeWords = boundedCache((route) => route.split(" "));

/**
 * Applies `defaults` to the options of a call without parsing anything: the
 * result has `method` as given, `url` with its placeholders, lowercased
 * headers merged over the default headers, and every other option. A route
 * is `"<METHOD> <url>"`, or only a URL. Options override the route's method
 * and URL, undefined values are left out, and plain objects present in both
 * (such as `mediaType`) merge key by key.
 */
export function merge(defaults: MergedOptions, route: string | EndpointOptions | undefined, options?: EndpointOptions): MergedOptions {
  const headers: RequestHeaders = Object.assign({}, defaults.headers);
  let own: Record<string, unknown> = {};
  let source = options;
  if (typeof route === "string") {
    const [first, second] = routeWords(route);
    own = second ? { method: first, url: second } : { url: first };
  } else {
    source = route;
  }
  if (source !== undefined && source !== null) {
    for (const key of Object.keys(source)) {
      const value = source[key];
      if (value === undefined || key === "__proto__") continue;
      if (key === "headers") addLowercaseHeaders(headers, value);
      else own[key] = value;
    }
  }
  const merged = mergeDeep(defaults, own);
  merged["headers"] = headers;
  if (own["url"] === "/graphql") merged["mediaType"] = graphqlMediaType(defaults, merged);
  return merged as MergedOptions;
}
