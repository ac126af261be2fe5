import { resolveBearerVerifierConfig, type BearerVerifierConfig, type BearerVerifierOptions } from "../config.js";
import { SignonUnavailableError } from "../errors.js";
import { sha256Hex } from "../oauth/random.js";
import { fetchSignonUser } from "../oauth/user-info.js";
import { userDetailsFromJson, type SignonUserDetails } from "../user.js";
import { BoundedTtlCache } from "./bounded-ttl-cache.js";

/**
 * The longest bearer token the verifier sends to Sign-on. Sign-on's tokens
 * are 64 characters, and its `/user.json` takes an `access_token` parameter of
 * at most 512: a longer token cannot be valid, and sending it would only let
 * Sign-on (or a proxy in front of it) refuse an oversized request header,
 * which reads as Sign-on being unavailable (a 503 to the caller).
 */
export const MAX_BEARER_TOKEN_LENGTH = 1024;

/**
 * After a check that Sign-on could not answer and a stale user was given
 * instead, how long that user is given again without asking Sign-on: while
 * Sign-on hangs (its database frozen), each request would otherwise wait for
 * the check's timeout.
 */
export const STALE_RETRY_MS = 5000;

/** A check's answer, and whether it was a remembered one given because Sign-on could not answer. */
interface Answer {
  user: SignonUserDetails | null;
  stale: boolean;
}

/**
 * Checks bearer tokens of API requests through Sign-on's `/user.json` and
 * remembers each answer (valid or not) for at most `bearerCacheTtlSeconds`.
 * Each check names this application (`clientId`), so only tokens issued to it
 * are accepted. The cache is keyed by the SHA-256 of the client id and the
 * token, bounded in size, and a
 * token being checked is checked once however many requests carry it.
 * Sign-on being unreachable is not remembered: the error goes to the caller,
 * unless `bearerStaleIfErrorSeconds` lets a user Sign-on returned for the
 * token before be given stale (while Sign-on cannot be reached or answers
 * 5xx, up to that long past the answer's lifetime, asking Sign-on again at
 * most every {@link STALE_RETRY_MS}). A fresh answer always replaces it,
 * a refusal included; refusals are never given stale.
 * `forgetUser(uid)` drops a user's answers at once (a push said they changed).
 * A token longer than {@link MAX_BEARER_TOKEN_LENGTH} is rejected without asking.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-2.1
 */
export class BearerTokenVerifier {
  readonly #cache: BoundedTtlCache<SignonUserDetails | null>;
  readonly #inFlight = new Map<string, Promise<Answer>>();
  /** Counts `forgetUser` calls: a check that saw one happen while it ran does not remember its answer. */
  #forgets = 0;
  #staleAnswers = 0;

  constructor(private readonly config: BearerVerifierConfig) {
    this.#cache = new BoundedTtlCache(config.bearerCacheTtlSeconds * 1000, config.bearerCacheMaxEntries);
  }

  /** The token's user (with this application's permissions), or `null` when Sign-on rejects it; in mock mode, the stand-in whatever the token. */
  async verify(token: string): Promise<SignonUserDetails | null> {
    if (this.config.mockUser !== null) return this.config.mockUser;
    if (token.length > MAX_BEARER_TOKEN_LENGTH) return null;
    const key = sha256Hex(`${this.config.clientId}\n${token}`);
    const now = this.config.clock.now();
    const cached = this.#cache.entry(key, now);
    if (cached !== undefined) {
      if (cached.expiresAt > now) return cached.value;
      if (cached.holdUntil > now) {
        this.#staleAnswers += 1;
        return cached.value;
      }
    }
    let check = this.#inFlight.get(key);
    if (check === undefined) {
      const started: Promise<Answer> = this.#check(key, token).finally(() => {
        if (this.#inFlight.get(key) === started) this.#inFlight.delete(key);
      });
      this.#inFlight.set(key, started);
      check = started;
    }
    const answer = await check;
    if (answer.stale) this.#staleAnswers += 1;
    return answer.user;
  }

  /** How many answers were given stale since the start: a user remembered past its lifetime, while Sign-on could not answer. */
  get staleAnswers(): number {
    return this.#staleAnswers;
  }

  /**
   * Forgets every remembered answer about the user `uid`, so the next request
   * with one of their tokens asks Sign-on again: a push said the user changed
   * (suspended, a permission revoked, signed out). Checks running now are not
   * shared with later requests nor remembered, since Sign-on may have answered
   * them before the change. Returns how many answers were dropped.
   */
  forgetUser(uid: string): number {
    this.#forgets += 1;
    this.#inFlight.clear();
    return this.#cache.deleteWhere((user) => user?.uid === uid);
  }

  /** The stand-in every token belongs to in mock mode (`mockUser`), else `null`. */
  get mockUser(): SignonUserDetails | null {
    return this.config.mockUser;
  }

  /** How many answers are remembered now. */
  get cachedEntries(): number {
    return this.#cache.size;
  }

  async #check(key: string, token: string): Promise<Answer> {
    const forgetsBefore = this.#forgets;
    let json: Awaited<ReturnType<typeof fetchSignonUser>>;
    try {
      json = await fetchSignonUser(this.config, token);
    } catch (error) {
      // Looked up after the failure: a user forgotten meanwhile (a push) is not given.
      const now = this.config.clock.now();
      const kept = signonCouldNotAnswer(error) ? this.#cache.entry(key, now) : undefined;
      if (kept === undefined || kept.value === null) throw error;
      kept.holdUntil = Math.min(now + STALE_RETRY_MS, kept.keptUntil);
      return { user: kept.value, stale: true };
    }
    const user = json === null || json.disabled === true ? null : userDetailsFromJson(json);
    const keepMs = user === null ? 0 : this.config.bearerStaleIfErrorSeconds * 1000;
    if (this.#forgets === forgetsBefore) this.#cache.set(key, user, this.config.clock.now(), keepMs);
    return { user, stale: false };
  }
}

/** Whether `error` says Sign-on could not be reached or answered 5xx: what a stale user may stand in for. */
function signonCouldNotAnswer(error: unknown): boolean {
  return error instanceof SignonUnavailableError && (error.status === undefined || error.status >= 500);
}

/**
 * A verifier for services that only check bearer tokens (no browser sign-in,
 * no stores), e.g. an API behind Sign-on.
 *
 * @example
 * const verifier = createBearerTokenVerifier({ signonUrl: "https://signon.example.org", clientId: process.env.SIGNON_CLIENT_ID });
 * const user = await verifier.verify(token); // null: Sign-on rejects the token
 */
export function createBearerTokenVerifier(options: BearerVerifierOptions): BearerTokenVerifier {
  return new BearerTokenVerifier(resolveBearerVerifierConfig(options));
}

/**
 * The token of an `Authorization: Bearer <token>` header, or `null` when the
 * header is missing or of another scheme.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-2.1
 */
export function bearerTokenFromHeader(header: string | undefined): string | null {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header ?? "");
  return match?.[1] ?? null;
}
