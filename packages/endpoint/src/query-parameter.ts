/**
 * One `name=value` pair of the query string, as `@octokit/endpoint` writes
 * it: the value percent-encoded, except that a `+` in the search query `q`
 * stays a `+` (search syntax uses it between terms).
 */
export function queryParameter(name: string, value: unknown): string {
  return name + "=" + (name === "q" ? String(value).split("+").map(encodeURIComponent).join("+") : encodeURIComponent(value as string));
}
