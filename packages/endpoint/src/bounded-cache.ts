/** Looks a key up, computing and storing its value on a miss. */
export type CachedLookup<Value> = (key: string, create: (key: string) => Value) => Value;

/**
 * A cache that holds at most `limit` entries; adding one more forgets the
 * oldest. Keys longer than `maxKeyLength` are never stored, so a stream of
 * huge one-off keys cannot pin much memory.
 */
export function boundedCache<Value>(limit: number, maxKeyLength: number): CachedLookup<Value> {
  const entries = new Map<string, Value>();
  return (key, create) => {
    const cached = entries.get(key);
    if (cached !== undefined) return cached;
    const value = create(key);
    if (key.length <= maxKeyLength) {
      if (entries.size >= limit) entries.delete(entries.keys().next().value as string);
      entries.set(key, value);
    }
    return value;
  };
}
