import { createBearerTokenVerifier, type BearerTokenVerifier, type Clock, type Fetch, type SignonUserDetails } from "@tessera/signon-client";
import type { CallerResolver, SignonCaller } from "./caller.js";

export { SignonUnavailableError } from "@tessera/signon-client";

/** What the resolver needs from its surroundings: Sign-on's address and, for tests, fetch and a clock. */
export interface SignonCallerResolverOptions {
  /** Base URL of the Sign-on service, e.g. `http://127.0.0.1:3000` (a path prefix is kept). */
  readonly signonUrl: string;
  /** The `completion` application's client id in Sign-on: tokens issued to any other application are refused. */
  readonly clientId: string;
  /** How long an answer is reused, in seconds; 0 to 60. */
  readonly cacheSeconds: number;
  /**
   * How long past `cacheSeconds` a caller Sign-on returned is still given
   * while Sign-on cannot be reached or answers 5xx, in seconds; 0 to 3600,
   * default 0 (`COMPLETION_CALLER_STALE_SECONDS` sets 300).
   */
  readonly staleSeconds?: number;
  readonly fetch?: Fetch;
  readonly clock?: Clock;
  /** Most tokens remembered at once; the oldest answers are dropped first (default 10 000). */
  readonly maxEntries?: number;
}

/** The caller of a Sign-on user as `@tessera/signon-client` describes it. */
export function callerFromSignonUser(user: SignonUserDetails): SignonCaller {
  return { uid: user.uid, email: user.email, name: user.name, permissions: user.permissions };
}

/**
 * Resolves bearer tokens (C7) with `@tessera/signon-client`'s bearer-token
 * verifier: Sign-on's `GET /user.json?client_id=<completion's>` with the token, so a token
 * issued to another application is refused (401), each answer (refusals
 * included) remembered for `cacheSeconds` in a bounded cache keyed by the
 * token's SHA-256, one request per token however many callers wait on it.
 * A token Sign-on refuses, or whose user is disabled, resolves to null;
 * Sign-on being unreachable or answering nonsense throws
 * `SignonUnavailableError` (a 503 here) and is not remembered, except that a
 * caller Sign-on returned for the token less than `cacheSeconds` +
 * `staleSeconds` ago is given instead while Sign-on cannot be reached or
 * answers 5xx (its database failing over), and counted in `staleAnswers`.
 * A push about the caller drops that answer as it does a current one.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-2.1
 */
export class SignonCallerResolver implements CallerResolver {
  readonly #verifier: BearerTokenVerifier;

  /** The verifier behind this resolver: Sign-on's push receivers drop remembered answers from it. */
  get verifier(): BearerTokenVerifier {
    return this.#verifier;
  }

  constructor(options: SignonCallerResolverOptions) {
    if (!Number.isInteger(options.cacheSeconds) || options.cacheSeconds < 0 || options.cacheSeconds > 60) {
      throw new RangeError("cacheSeconds must be a whole number from 0 to 60.");
    }
    const staleSeconds = options.staleSeconds ?? 0;
    if (!Number.isInteger(staleSeconds) || staleSeconds < 0 || staleSeconds > 3600) {
      throw new RangeError("staleSeconds must be a whole number from 0 to 3600.");
    }
    this.#verifier = createBearerTokenVerifier({
      signonUrl: options.signonUrl,
      clientId: options.clientId,
      bearerCacheTtlSeconds: options.cacheSeconds,
      bearerStaleIfErrorSeconds: staleSeconds,
      ...(options.maxEntries === undefined ? {} : { bearerCacheMaxEntries: options.maxEntries }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
  }

  get staleAnswers(): number {
    return this.#verifier.staleAnswers;
  }

  async resolveCaller(bearerToken: string): Promise<SignonCaller | null> {
    const user = await this.#verifier.verify(bearerToken);
    return user === null ? null : callerFromSignonUser(user);
  }
}
