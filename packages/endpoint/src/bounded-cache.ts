/** Most entries kept; an application uses far fewer distinct routes. */
const LIMIT = 500;
/** Longer keys are never stored, so a stream of huge one-off keys cannot pin much memory. */
const LONGEST_KEY = 2048;

/**
 * `create`, remembered: a lookup that computes a key's value on a miss and
 * keeps at most 500 entries (adding one more forgets the oldest). Keys longer
 * than 2,048 characters are computed every time.
 */
export function boundedCache<Value>(create: (key: string) => Value): (key: string) => Value {
  const entries = new Map<string, Value>();
  return (key) => {
    let value = entries.get(key);
    if (value === undefined) {
      value = create(key);
      if (key.length <= LONGEST_KEY) {
        if (entries.size >= LIMIT) entries.delete(entries.keys().next().value as string);
        entries.set(key, value);
      }
    }
    return value;
  };
}
