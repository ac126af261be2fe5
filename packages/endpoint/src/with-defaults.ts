import { merge } from "./merge.js";
import { parse } from "./parse.js";
import type { Endpoint, EndpointOptions, MergedOptions } from "./types.js";

/**
 * An endpoint function bound to `defaults`. Its `.defaults()` derives a new
 * function from these defaults amended by the given options (later values
 * win, headers merge); this one and its defaults stay unchanged.
 */
export function withDefaults(defaults: MergedOptions): Endpoint {
  const mergeWithDefaults = (route: string | EndpointOptions, options?: EndpointOptions) => merge(defaults, route, options);
  return Object.assign((route: string | EndpointOptions, options?: EndpointOptions) => parse(mergeWithDefaults(route, options)), {
    DEFAULTS: defaults,
    defaults: (options: EndpointOptions) => withDefaults(mergeWithDefaults(options)),
    merge: mergeWithDefaults,
    parse,
  }) as Endpoint;
}
