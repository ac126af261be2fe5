/**
 * One `name=value` pair of the query string, as `@octokit/endpoint` writes
 * it: the value percent-encoded, except that a `+` in the search query `q`
 * stays a `+` (search syntax uses it between terms).
 */
export function queryParameter(name: string, value: unknown): string {
  if (name === "q") {
    const query = String(value);
    return query.includes("+") ? "q=" + query.split("+").map(encodeURIComponent).join("+") : "q=" + encodeURIComponent(query);
  }
  return name + "=" + encodeURIComponent(value as string);
}
