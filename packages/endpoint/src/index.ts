import { DEFAULTS } from "./defaults.js";
import type { Endpoint } from "./types.js";
import { withDefaults } from "./with-defaults.js";

/**
 * Turns a REST route and parameters into request options (`method`, `url`,
 * `headers`, `body`, `request`) for any HTTP client, sending nothing.
 *
 * @example
 * endpoint("GET /users/{uid}", { uid: "42" });
 * // { method: "GET", url: "http://localhost:3000/users/42", headers: { … } }
 */
export const endpoint: Endpoint = withDefaults(DEFAULTS);

export type {
  Endpoint,
  EndpointDefaults,
  EndpointOptions,
  MediaType,
  MergedOptions,
  RequestHeaders,
  RequestOptions,
  RequestRequestOptions,
} from "./types.js";
