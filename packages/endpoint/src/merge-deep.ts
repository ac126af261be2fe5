/** Whether `value` is a plain object (object literal, `Object.create(null)`, or either from another realm). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}

/**
 * A new object with `overrides` laid over `defaults`. Plain objects present on
 * both sides (such as `headers`) merge key by key; anything else is taken from
 * `overrides` as it is. Neither input is changed.
 */
export function mergeDeep(defaults: Readonly<Record<string, unknown>>, overrides: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const merged: Record<string, unknown> = Object.assign({}, defaults);
  for (const key of Object.keys(overrides)) {
    const override = overrides[key];
    const base = merged[key];
    if (isPlainObject(override) && isPlainObject(base) && Object.prototype.hasOwnProperty.call(defaults, key)) {
      merged[key] = mergeDeep(base, override);
    } else if (key !== "__proto__") {
      merged[key] = override;
    }
  }
  return merged;
}
