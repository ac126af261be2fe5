/** A single parameter value, or why there is none. */
export type SingleField = { value: string } | { missing: true } | { duplicated: true };

/**
 * Reads one parameter that must appear at most once. Repeated parameters are
 * an error in OAuth requests.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.1
 */
export function singleField(fields: Readonly<Record<string, unknown>> | undefined, name: string): SingleField {
  const value = fields?.[name];
  if (Array.isArray(value)) return { duplicated: true };
  if (typeof value !== "string") return { missing: true };
  return { value };
}
