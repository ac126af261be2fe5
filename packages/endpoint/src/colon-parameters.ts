const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const COLON = 58;
const QUESTION_MARK = 63;
const NUMBER_SIGN = 35;

function isLowercaseLetter(code: number): boolean {
  return code >= 97 && code <= 122;
}

function isWordCharacter(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

/** A full URL's `scheme://authority`, which holds no placeholders. (One anchored pass: linear time.) */
const SCHEME_AND_AUTHORITY = /^[a-z][\w+.-]*:\/\/[^/?#]*/i;

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
  for (let at = SCHEME_AND_AUTHORITY.exec(url)?.[0].length ?? 0; at < url.length; at++) {
    const code = url.charCodeAt(at);
    if (code === OPEN_BRACE) insideExpression = true;
    else if (code === CLOSE_BRACE) insideExpression = false;
    else if (insideExpression) continue;
    else if (code === QUESTION_MARK || code === NUMBER_SIGN) break;
    else if (code === COLON && isLowercaseLetter(url.charCodeAt(at + 1)) && isWordCharacter(url.charCodeAt(at + 2))) {
      let end = at + 3;
      while (end < url.length && isWordCharacter(url.charCodeAt(end))) end++;
      rewritten += url.slice(copiedUpTo, at) + "{" + url.slice(at + 1, end) + "}";
      copiedUpTo = end;
      at = end - 1;
    }
  }
  return copiedUpTo === 0 ? url : rewritten + url.slice(copiedUpTo);
}
