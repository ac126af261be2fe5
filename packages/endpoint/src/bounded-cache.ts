/**
 * A map that holds at most `limit` entries; adding one more forgets the
 * oldest. Keys longer than `maxKeyLength` are never stored, so a stream of
 * huge one-off keys cannot pin much memory.
 */
export class BoundedCache<Value> {
  readonly #entries = new Map<string, Value>();
  readonly #limit: number;
  readonly #maxKeyLength: number;

  constructor(limit: number, maxKeyLength: number) {
    this.#limit = limit;
    this.#maxKeyLength = maxKeyLength;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The cached value for `key`, computing and storing it on a miss. */
  getOrCreate(key: string, create: (key: string) => Value): Value {
    const cached = this.#entries.get(key);
    if (cached !== undefined) return cached;
    const value = create(key);
    if (key.length <= this.#maxKeyLength) {
      if (this.#entries.size >= this.#limit) {
        const oldest = this.#entries.keys().next();
        if (oldest.done !== true) this.#entries.delete(oldest.value);
      }
      this.#entries.set(key, value);
    }
    return value;
  }
}
