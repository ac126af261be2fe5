import type { RequestHeaders } from "./types.js";

/** Copies `headers` into `target` with every name lowercased, leaving out undefined values; returns `target`. */
export function addLowercaseHeaders(target: RequestHeaders, headers: unknown): RequestHeaders {
  if (typeof headers !== "object" || headers === null) return target;
  for (const name of Object.keys(headers)) {
    const value = (headers as RequestHeaders)[name];
    if (value !== undefined && name !== "__proto__") target[name.toLowerCase()] = value;
  }
  return target;
}
