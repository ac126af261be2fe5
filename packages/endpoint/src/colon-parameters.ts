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
  let rewritten = "";
  let copiedUpTo = 0;
  let insideExpression = false;
  PATH_TOKENS.lastIndex = SCHEME_AND_AUTHORITY.exec(url)?.[0].length ?? 0;
  for (let token = PATH_TOKENS.exec(url); token !== null; token = PATH_TOKENS.exec(url)) {
    const text = token[0];
    if (text === "{" || text === "}") insideExpression = text === "{";
    else if (insideExpression) continue;
    else if (text === "?" || text === "#") break;
    else {
      rewritten += url.slice(copiedUpTo, token.index) + "{" + text.slice(1) + "}";
      copiedUpTo = token.index + text.length;
    }
  }
  return copiedUpTo === 0 ? url : rewritten + url.slice(copiedUpTo);
}
