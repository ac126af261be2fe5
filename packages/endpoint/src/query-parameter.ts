/**
 * One `name=value` pair of the query string, as `@octokit/endpoint` writes
 * it: the value percent-encoded, except that a `+` in the search query `q`
 * stays a `+` (search syntax uses it between terms).
 */
export function queryParameter(name: string, value: unknown): string {
  if (name !== "q") return name + "=" + encodeURIComponent(value as string);
  const query = String(value);
  return "q=" + (query.includes("+") ? query.split("+").map(encodeURIComponent).join("+") : encodeURIComponent(query));
}
