import { SignonUnavailableError } from "../errors.js";
import type { RequestOptions } from "./request-options.js";

/** The `fetch` this package calls; injected, the global one by default. */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** A response from Sign-on with its body parsed as JSON (`undefined` when it was not JSON). */
export interface SignonResponse {
  status: number;
  headers: Headers;
  json: unknown;
}

/**
 * Sends request options built by `signonRequestOptions` and reads the JSON body.
 * Network failures and unreadable bodies become `SignonUnavailableError`; the
 * error never carries request headers (they hold credentials).
 */
export async function sendRequest(fetch: Fetch, options: RequestOptions, timeoutMs: number): Promise<SignonResponse> {
  const init: RequestInit = {
    method: options.method,
    headers: options.headers,
    redirect: "manual",
    signal: AbortSignal.timeout(timeoutMs),
  };
  if (options.body !== undefined) init.body = options.body;
  let response: Response;
  try {
    response = await fetch(options.url, init);
  } catch (error) {
    throw new SignonUnavailableError(`${options.method} ${withoutQuery(options.url)} failed: ${describe(error)}`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw new SignonUnavailableError(`${options.method} ${withoutQuery(options.url)}: body unreadable: ${describe(error)}`);
  }
  return { status: response.status, headers: response.headers, json: parseJson(text) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function withoutQuery(url: string): string {
  return url.split("?")[0] ?? url;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
