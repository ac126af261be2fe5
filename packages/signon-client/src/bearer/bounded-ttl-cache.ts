interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * A map whose entries expire after a fixed time and which never holds more
 * than `maxEntries`: when full, the oldest entry goes first.
 */
export class BoundedTtlCache<V> {
  readonly #entries = new Map<string, Entry<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  /** The value stored under `key`, unless it has expired at `now`. */
  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, now: number): void {
    if (this.maxEntries === 0 || this.ttlMs === 0) return;
    this.#entries.delete(key);
    while (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, expiresAt: now + this.ttlMs });
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
