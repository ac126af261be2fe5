/** Whether `value` is a plain object (object literal, `Object.create(null)`, or either from another realm). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}

/**
 * A new object with `overrides` laid over `defaults`: plain objects present on
 * both sides (such as `mediaType`) merge key by key; any other value of
 * `overrides` replaces the default. Neither input is changed.
 */
export function mergeDeep(defaults: Readonly<Record<string, unknown>>, overrides: Readonly<Record<string, unknown>>): Record<string, unknown> {
  // Object.assign rather than spread: V8 adds keys to the copy far faster.
  const merged: Record<string, unknown> = Object.assign({}, defaults);
  for (const key of Object.keys(overrides)) {
    const base = defaults[key];
    const override = overrides[key];
    if (key !== "__proto__") merged[key] = isPlainObject(base) && isPlainObject(override) ? mergeDeep(base, override) : override;
  }
  return merged;
}
