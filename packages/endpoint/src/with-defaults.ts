import { DEFAULT_VENDOR, vendorOf } from "./media-type.js";
import { merge } from "./merge.js";
import { parse } from "./parse.js";
import type { Endpoint, EndpointOptions, MergedOptions } from "./types.js";

/**
 * An endpoint function bound to `defaults`. Its `.defaults()` derives a new
 * function from these defaults amended by the given options (later values
 * win, headers merge); this one and its defaults stay unchanged. GraphQL
 * previews in a call whose accept header names no vendor take the vendor of
 * the defaults' accept header.
 */
export function withDefaults(defaults: MergedOptions): Endpoint {
  const mergeWithDefaults = (route: string | EndpointOptions, options?: EndpointOptions) => merge(defaults, route, options);
  const fallbackVendor = vendorOf(defaults.headers["accept"]) ?? DEFAULT_VENDOR;
  const parseWithDefaults = (options: MergedOptions) => parse(options, fallbackVendor);
  return Object.assign((route: string | EndpointOptions, options?: EndpointOptions) => parseWithDefaults(mergeWithDefaults(route, options)), {
    DEFAULTS: defaults,
    defaults: (options: EndpointOptions) => withDefaults(mergeWithDefaults(options)),
    merge: mergeWithDefaults,
    parse: parseWithDefaults,
  }) as Endpoint;
}
