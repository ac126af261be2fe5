/**
 * One `name=value` pair of the query string, as `@octokit/endpoint` writes
 * it: the value percent-encoded, except that a `+` in the search query `q`
 * stays a `+` (search syntax uses it between terms). `encodeURIComponent`
 * writes `+` as `%2B`, and only `+`: it writes a `%` as `%25`.
 */
export function queryParameter(name: string, value: unknown): string {
  if (name !== "q") return name + "=" + encodeURIComponent(value as string);
  const query = encodeURIComponent(String(value));
  return "q=" + (query.includes("%2B") ? query.replaceAll("%2B", "+") : query);
}
