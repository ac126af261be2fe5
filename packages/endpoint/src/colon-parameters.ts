/** A full URL's `scheme://authority`, which holds no placeholders. (One anchored pass: linear time.) */
const SCHEME_AND_AUTHORITY = /^[a-z][\w+.-]*:\/\/[^/?#]*/i;
/** Braces, the end of the path, and `:name` placeholders. (No backtracking: linear time.) */
const PATH_TOKENS = /[{}?#]|:[a-z]\w+/g;

/**
 * Rewrites `:name` placeholders in the path of a route URL as `{name}`
 * template expressions. A name starts with a lowercase letter and has at
 * least two word characters, as `@octokit/endpoint` reads them. Unlike that
 * library, only the path counts: a `:word` in the authority, the query, the
 * fragment or inside an expression stays text.
 */
export function colonParametersToTemplate(url: string): string {
  const pathStart = SCHEME_AND_AUTHORITY.exec(url)?.[0].length ?? 0;
  let insideExpression = false;
  let pathEnded = false;
  const path = url.slice(pathStart).replace(PATH_TOKENS, (token) => {
    if (token === "{" || token === "}") insideExpression = token === "{";
    else if (insideExpression || pathEnded) return token;
    else if (token === "?" || token === "#") pathEnded = true;
    else return "{" + token.slice(1) + "}";
    return token;
  });
  return url.slice(0, pathStart) + path;
}
