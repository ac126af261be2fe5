import { endpoint } from "@tessera/endpoint";
import type { CallerResolver, SignonCaller } from "./caller.js";

/** What the resolver needs from its surroundings: Sign-on's address, fetch and a clock. */
export interface SignonCallerResolverOptions {
  /** Base URL of the Sign-on service, e.g. `http://127.0.0.1:3000`. */
  readonly signonUrl: string;
  /** How long an answer is reused, in milliseconds; at most 60 000. */
  readonly cacheMs: number;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  /** Most tokens remembered at once; the oldest answers are dropped first. */
  readonly maxEntries?: number;
}

interface CacheEntry {
  readonly caller: SignonCaller | null;
  readonly expires: number;
}

/** Sign-on could not be asked (network failure or an unexpected answer); not the caller's fault. */
export class SignonUnavailableError extends Error {
  override readonly name = "SignonUnavailableError";
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** Reads the `user` object of a `/user.json` answer; null when it is not the documented shape. */
export function parseUserJson(body: unknown): SignonCaller | null {
  if (typeof body !== "object" || body === null) return null;
  const user = (body as { user?: unknown }).user;
  if (typeof user !== "object" || user === null) return null;
  const { uid, email, name, permissions } = user as Record<string, unknown>;
  if (typeof uid !== "string" || typeof email !== "string" || typeof name !== "string" || !isStringArray(permissions)) return null;
  return { uid, email, name, permissions };
}

/**
 * Resolves bearer tokens through Sign-on's `GET /user.json` (decision S11):
 * 200 with `{"user":{...}}` names the caller, 401 means the token is not
 * good. Answers, refusals included, are cached for `cacheMs` so that a busy
 * client does not cost a Sign-on round trip per request; the cache key is a
 * digest of the token, never the token itself.
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-2.1
 */
export class SignonCallerResolver implements CallerResolver {
  readonly #options: SignonCallerResolverOptions;
  readonly #userJson: typeof endpoint;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inFlight = new Map<string, Promise<SignonCaller | null>>();

  constructor(options: SignonCallerResolverOptions) {
    if (options.cacheMs < 0 || options.cacheMs > 60_000) throw new RangeError("cacheMs must be from 0 to 60000.");
    this.#options = options;
    // The request is built by @tessera/endpoint, like every outbound call of Tessera.
    this.#userJson = endpoint.defaults({ baseUrl: options.signonUrl.replace(/\/+$/, ""), headers: { accept: "application/json" } });
    this.#fetch = options.fetch ?? fetch;
    this.#now = options.now ?? Date.now;
  }

  async resolveCaller(bearerToken: string): Promise<SignonCaller | null> {
    const key = await digest(bearerToken);
    const cached = this.#cache.get(key);
    if (cached && cached.expires > this.#now()) return cached.caller;
    const pending = this.#inFlight.get(key);
    if (pending) return pending;
    // Failures are not cached: the next request asks Sign-on again.
    const lookup = this.#ask(bearerToken).then((caller) => {
      this.#remember(key, caller);
      return caller;
    });
    this.#inFlight.set(key, lookup);
    try {
      return await lookup;
    } finally {
      this.#inFlight.delete(key);
    }
  }

  async #ask(bearerToken: string): Promise<SignonCaller | null> {
    const { url, method, headers } = this.#userJson("GET /user.json", { headers: { authorization: `Bearer ${bearerToken}` } });
    let response: Response;
    try {
      response = await this.#fetch(url, { method, headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)])) });
    } catch (error) {
      throw new SignonUnavailableError(`Sign-on did not answer: ${(error as Error).message}`);
    }
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel();
      return null;
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new SignonUnavailableError(`Sign-on answered /user.json with status ${response.status}.`);
    }
    const caller = parseUserJson(await response.json().catch(() => null));
    if (!caller) throw new SignonUnavailableError("Sign-on answered /user.json with an unexpected body.");
    return caller;
  }

  #remember(key: string, caller: SignonCaller | null): void {
    if (this.#options.cacheMs === 0) return;
    const max = this.#options.maxEntries ?? 10_000;
    while (this.#cache.size >= max) {
      const oldest = this.#cache.keys().next();
      if (oldest.done) break;
      this.#cache.delete(oldest.value);
    }
    this.#cache.set(key, { caller, expires: this.#now() + this.#options.cacheMs });
  }
}

async function digest(token: string): Promise<string> {
  const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return Buffer.from(bytes).toString("hex");
}
