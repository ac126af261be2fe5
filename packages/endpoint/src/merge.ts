import { lowercaseHeaders } from "./lowercase-headers.js";
import { isPlainObject, mergeDeep } from "./merge-deep.js";
import type { EndpointOptions, MediaType, MergedOptions } from "./types.js";

/** Method and URL of a `"<METHOD> <url>"` route; a route without a space is a URL. */
function routeParts(route: string): Record<string, unknown> {
  const space = route.indexOf(" ");
  if (space === -1) return { url: route };
  const nextSpace = route.indexOf(" ", space + 1);
  const url = route.slice(space + 1, nextSpace === -1 ? route.length : nextSpace);
  return url === "" ? { url: route.slice(0, space) } : { method: route.slice(0, space), url };
}

/** The options of one call: route parts overlaid by options, undefined values dropped, header names lowercased. */
function callOptions(route: string | EndpointOptions | undefined, options: EndpointOptions | undefined): Record<string, unknown> {
  const given = typeof route === "string" ? routeParts(route) : {};
  const source = typeof route === "string" ? options : route;
  if (source !== undefined && source !== null) {
    for (const key of Object.keys(source)) {
      const value = source[key];
      if (value !== undefined && key !== "__proto__") given[key] = value;
    }
  }
  given["headers"] = lowercaseHeaders(given["headers"]);
  return given;
}

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
 * headers merged over the default headers, and every other option.
 */
export function merge(
  defaults: MergedOptions | null,
  route: string | EndpointOptions | undefined,
  options?: EndpointOptions,
): MergedOptions {
  const given = callOptions(route, options);
  const merged = mergeDeep(defaults ?? {}, given);
  if (given["url"] === "/graphql") merged["mediaType"] = graphqlMediaType(defaults, merged);
  return merged as MergedOptions;
}
