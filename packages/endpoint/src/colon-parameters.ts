/**
 * What a route URL's `:name` placeholders are looked for among: a full URL's
 * `scheme://authority`, an expression (up to its closing brace, or the next
 * opening one), the query or fragment (to the end), and `:name` itself, whose
 * name is captured. Only `:name` outside the others is a placeholder. (Each
 * attempt stops at the next brace or at the end: linear time.)
 */
const ROUTE_TOKENS = /^[a-zA-Z][\w+.-]*:\/\/[^/?#]*|\{[^{}]*\}?|[?#][^]*|:([a-z]\w+)/g;

/**
 * Rewrites `:name` placeholders in the path of a route URL as `{name}`
 * template expressions. A name starts with a lowercase letter and has at
 * least two word characters, as `@octokit/endpoint` reads them. Unlike that
 * library, only the path counts: a `:word` in the authority, the query, the
 * fragment or inside an expression stays text.
 */
export function colonParametersToTemplate(url: string): string {
  return url.replace(ROUTE_TOKENS, (token, name?: string) => (name === undefined ? token : "{" + name + "}"));
}
