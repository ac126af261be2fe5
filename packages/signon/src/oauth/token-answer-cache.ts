import type { LiveAccessToken } from "../repositories/resource-tokens.js";

/** An answer is dropped this long after it was read, whatever the notifications say: the bound on a stale answer if they ever fail unnoticed. */
export const TOKEN_ANSWER_MAX_AGE_MS = 60_000;

interface KeptAnswer {
  answer: LiveAccessToken;
  readAt: number;
}

/**
 * The answers of access-token lookups that this process has read, by token
 * digest, so that a token used again is answered without a database round
 * trip. Only while changes reach the process (`following`), and only answers
 * read entirely between two changes: any change, wherever it comes from,
 * forgets them all ({@link forgetAll}), and a read that overlapped one is not
 * kept ({@link keep} compares the generation it started in).
 *
 * ```ts
 * const since = cache.generation;
 * const answer = cache.find(digest, now) ?? (await readFromDatabase());
 * cache.keep(digest, answer, since);
 * ```
 */
export class TokenAnswerCache {
  readonly #capacity: number;
  readonly #clock: () => number;
  readonly #answers = new Map<string, KeptAnswer>();
  #generation = 0;
  #following = false;

  /** @param capacity most answers kept; the oldest goes first. */
  constructor(capacity: number, clock: () => number = () => performance.now()) {
    this.#capacity = capacity;
    this.#clock = clock;
  }

  /** Counts the changes seen: a read that starts and ends in the same generation saw none. */
  get generation(): number {
    return this.#generation;
  }

  /** How many answers are kept. */
  get size(): number {
    return this.#answers.size;
  }

  /** The kept answer for a token digest while its token is unexpired at `now`, else `undefined`. */
  find(tokenHash: string, now: Date): LiveAccessToken | undefined {
    const kept = this.#answers.get(tokenHash);
    if (kept === undefined) return undefined;
    if (kept.answer.expiresAt.getTime() <= now.getTime() || this.#clock() - kept.readAt > TOKEN_ANSWER_MAX_AGE_MS) {
      this.#answers.delete(tokenHash);
      return undefined;
    }
    return kept.answer;
  }

  /** Keeps an answer read from the database since `generation`, unless a change came in the meantime or changes are not followed. */
  keep(tokenHash: string, answer: LiveAccessToken, generation: number): void {
    if (!this.#following || generation !== this.#generation || this.#capacity === 0) return;
    if (this.#answers.size >= this.#capacity && !this.#answers.has(tokenHash)) {
      const oldest = this.#answers.keys().next();
      if (!oldest.done) this.#answers.delete(oldest.value);
    }
    // Shared by every request that finds it: none may change it.
    Object.freeze(answer.user);
    Object.freeze(answer.application);
    Object.freeze(answer.permissions);
    this.#answers.set(tokenHash, { answer: Object.freeze(answer), readAt: this.#clock() });
  }

  /** A change may have altered any answer: forget them all, and refuse reads that started before it. */
  forgetAll(): void {
    this.#generation += 1;
    this.#answers.clear();
  }

  /** Whether changes reach this process; answers are kept only while they do. Either way, everything kept so far is forgotten. */
  set following(following: boolean) {
    this.forgetAll();
    this.#following = following;
  }

  get following(): boolean {
    return this.#following;
  }
}
