/** One remembered value and how long it may be used. */
export interface CacheEntry<V> {
  value: V;
  /** Until then the value is current. */
  expiresAt: number;
  /** Until then the entry is kept, past `expiresAt`, for {@link BoundedTtlCache.entry} (`expiresAt` when it is not kept). */
  keptUntil: number;
  /** Until then a caller may go on using the value past `expiresAt` without asking again (its last renewal failed). */
  holdUntil: number;
}

/**
 * A map whose entries expire after a fixed time and which never holds more
 * than `maxEntries`: when full, the oldest entry goes first. An entry may be
 * kept for a while past its expiry ({@link BoundedTtlCache.set}'s `keepMs`),
 * to be used when a fresh value cannot be had.
 */
export class BoundedTtlCache<V> {
  readonly #entries = new Map<string, CacheEntry<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  /** The value stored under `key`, unless it has expired at `now`. */
  get(key: string, now: number): V | undefined {
    const entry = this.entry(key, now);
    return entry !== undefined && entry.expiresAt > now ? entry.value : undefined;
  }

  /** The entry under `key`, expired or not, while it is kept at `now`; one no longer kept is dropped. */
  entry(key: string, now: number): CacheEntry<V> | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.keptUntil <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Stores `value` under `key` for the cache's time, and keeps it `keepMs` longer (default 0) for {@link entry}. */
  set(key: string, value: V, now: number, keepMs = 0): void {
    if (this.maxEntries === 0 || this.ttlMs === 0) return;
    this.#entries.delete(key);
    while (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, expiresAt: now + this.ttlMs, keptUntil: now + this.ttlMs + keepMs, holdUntil: 0 });
  }

  /** Removes every entry whose value satisfies `drop`; returns how many went. */
  deleteWhere(drop: (value: V) => boolean): number {
    let deleted = 0;
    for (const [key, entry] of this.#entries) {
      if (drop(entry.value)) {
        this.#entries.delete(key);
        deleted += 1;
      }
    }
    return deleted;
  }

  get size(): number {
    return this.#entries.size;
  }
}
