/** Whether `value` is a plain object (object literal, `Object.create(null)`, or either from another realm). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}

/**
 * The value `defaults[key]` becomes when `override` is laid over it: both
 * plain objects merge key by key (see {@link mergeDeep}); otherwise
 * `override` as it is.
 */
export function overriddenValue(defaults: Readonly<Record<string, unknown>>, key: string, override: unknown): unknown {
  const base = defaults[key];
  return isPlainObject(override) && isPlainObject(base) ? mergeDeep(base, override) : override;
}

/**
 * A new object with `overrides` laid over `defaults`, plain objects present on
 * both sides (such as `mediaType`) merging key by key. Neither input is changed.
 */
export function mergeDeep(defaults: Readonly<Record<string, unknown>>, overrides: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const merged = { ...defaults };
  for (const key of Object.keys(overrides)) {
    if (key !== "__proto__") merged[key] = overriddenValue(defaults, key, overrides[key]);
  }
  return merged;
}
