import { boundedCache } from "./bounded-cache.js";
import { addLowercaseHeaders } from "./lowercase-headers.js";
import { isPlainObject, overriddenValue } from "./merge-deep.js";
import type { EndpointOptions, MediaType, MergedOptions, RequestHeaders } from "./types.js";

interface RouteParts {
  readonly method: string | undefined;
  readonly url: string;
}

/** Method and URL of a `"<METHOD> <url>"` route; a route without a space is a URL. */
function splitRoute(route: string): RouteParts {
  const space = route.indexOf(" ");
  if (space === -1) return { method: undefined, url: route };
  const nextSpace = route.indexOf(" ", space + 1);
  const url = route.slice(space + 1, nextSpace === -1 ? route.length : nextSpace);
  return url === "" ? { method: undefined, url: route.slice(0, space) } : { method: route.slice(0, space), url };
}

// Routes are usually string constants; keeping their parts also hands the template cache the same URL string each time.
const cachedRoute = boundedCache<RouteParts>(500, 2048);

/**
 * GraphQL calls combine the default previews with their own, named without
 * the `-preview` suffix (`@octokit/endpoint` behaviour). A fresh `mediaType`
 * object is built so the defaults are never changed.
 */
function graphqlMediaType(defaults: MergedOptions | null, merged: Record<string, unknown>): MediaType {
  const mediaType: MediaType = { ...(isPlainObject(merged["mediaType"]) ? merged["mediaType"] : {}) };
  const own = mediaType.previews ?? [];
  const inherited = defaults?.mediaType.previews ?? [];
  const previews = inherited.length > 0 ? inherited.filter((preview) => !own.includes(preview)).concat(own) : own;
  mediaType.previews = previews.map((preview) => preview.replace("-preview", ""));
  return mediaType;
}

/**
 * Applies `defaults` to the options of a call without parsing anything: the
 * result has `method` as given, `url` with its placeholders, lowercased
 * headers merged over the default headers, and every other option. Options
 * override the route's method and URL, undefined values are left out, and
 * plain objects present in both (such as `mediaType`) merge key by key.
 */
export function merge(
  defaults: MergedOptions | null,
  route: string | EndpointOptions | undefined,
  options?: EndpointOptions,
): MergedOptions {
  const base: Readonly<Record<string, unknown>> = defaults ?? {};
  const merged: Record<string, unknown> = Object.assign({}, base);
  const headers: RequestHeaders = Object.assign({}, isPlainObject(base["headers"]) ? (base["headers"] as RequestHeaders) : {});
  merged["headers"] = headers;
  let source: EndpointOptions | undefined = options;
  let url: unknown;
  if (typeof route === "string") {
    const parts = cachedRoute(route, splitRoute);
    if (parts.method !== undefined) merged["method"] = parts.method;
    merged["url"] = url = parts.url;
  } else {
    source = route;
  }
  if (source !== undefined && source !== null) {
    for (const key of Object.keys(source)) {
      const value = source[key];
      if (value === undefined || key === "__proto__") continue;
      if (key === "headers") {
        addLowercaseHeaders(headers, value);
        continue;
      }
      if (key === "url") url = value;
      merged[key] = overriddenValue(base, key, value);
    }
  }
  if (url === "/graphql") merged["mediaType"] = graphqlMediaType(defaults, merged);
  return merged as MergedOptions;
}
