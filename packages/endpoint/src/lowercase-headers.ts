import type { RequestHeaders } from "./types.js";

/** A copy of `headers` with every name lowercased and undefined values left out. */
export function lowercaseHeaders(headers: unknown): RequestHeaders {
  const lowercased: RequestHeaders = {};
  if (typeof headers !== "object" || headers === null) return lowercased;
  for (const name of Object.keys(headers)) {
    const value = (headers as RequestHeaders)[name];
    if (value !== undefined && name !== "__proto__") lowercased[name.toLowerCase()] = value;
  }
  return lowercased;
}
