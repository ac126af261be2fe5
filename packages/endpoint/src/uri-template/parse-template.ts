import { encodeReserved, encodeUnreserved } from "./encode.js";
import { OPERATORS, type OperatorBehaviour } from "./operators.js";

/** One variable of an expression, such as `path:6` or `list*`. */
export interface VariableSpec {
  readonly name: string;
  /** `name` percent-encoded for `name=value` output. */
  readonly encodedName: string;
  /** Prefix length in characters (`:n`), or -1 when there is none. */
  readonly prefix: number;
  /** Whether the explode modifier (`*`) is set. */
  readonly explode: boolean;
}

/** A `{…}` expression: an operator and its variables. */
export interface Expression {
  readonly operator: OperatorBehaviour;
  readonly variables: readonly VariableSpec[];
}

/** A template split into literal text (already encoded) and expressions. */
export interface ParsedTemplate {
  readonly parts: readonly (string | Expression)[];
  /** Every variable name the template mentions, once each, in order. */
  readonly variableNames: readonly string[];
}

const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const COLON = 58;
const ASTERISK = 42;

function parseVariableSpec(spec: string): VariableSpec {
  let end = 0;
  while (end < spec.length && spec.charCodeAt(end) !== COLON && spec.charCodeAt(end) !== ASTERISK) end++;
  const name = spec.slice(0, end);
  const modifier = spec.charCodeAt(end);
  let prefix = -1;
  if (modifier === COLON) {
    let digitsEnd = end + 1;
    while (digitsEnd < spec.length && digitsEnd < end + 5 && spec.charCodeAt(digitsEnd) >= 48 && spec.charCodeAt(digitsEnd) <= 57) {
      digitsEnd++;
    }
    if (digitsEnd > end + 1) prefix = Number(spec.slice(end + 1, digitsEnd));
  }
  return { name, encodedName: encodeUnreserved(name), prefix, explode: modifier === ASTERISK };
}

const SIMPLE_STRING = OPERATORS[""] as OperatorBehaviour;

function parseExpression(body: string): Expression {
  const first = body.charAt(0);
  const hasOperator = first !== "" && Object.hasOwn(OPERATORS, first);
  const variables = (hasOperator ? body.slice(1) : body)
    .split(",")
    .map(parseVariableSpec)
    .filter((variable) => variable.name !== "");
  return { operator: hasOperator ? (OPERATORS[first] as OperatorBehaviour) : SIMPLE_STRING, variables };
}

/**
 * Splits an RFC 6570 URI template into literals and expressions, in one pass
 * over the text. Literal text is encoded as reserved expansion encodes it; a
 * brace that does not open or close an expression is kept as written.
 * @see https://www.rfc-editor.org/rfc/rfc6570#section-2
 */
export function parseTemplate(template: string): ParsedTemplate {
  const parts: (string | Expression)[] = [];
  const names = new Set<string>();
  let literal = "";
  let literalStart = 0;
  let at = 0;
  while (at < template.length) {
    const code = template.charCodeAt(at);
    if (code !== OPEN_BRACE && code !== CLOSE_BRACE) {
      at++;
      continue;
    }
    literal += encodeReserved(template.slice(literalStart, at));
    let end = at + 1;
    if (code === OPEN_BRACE) {
      while (end < template.length && template.charCodeAt(end) !== OPEN_BRACE && template.charCodeAt(end) !== CLOSE_BRACE) end++;
    }
    if (code === OPEN_BRACE && template.charCodeAt(end) === CLOSE_BRACE && end > at + 1) {
      if (literal !== "") parts.push(literal);
      literal = "";
      const expression = parseExpression(template.slice(at + 1, end));
      for (const variable of expression.variables) names.add(variable.name);
      parts.push(expression);
      at = end + 1;
    } else {
      literal += template.charAt(at);
      at++;
    }
    literalStart = at;
  }
  literal += encodeReserved(template.slice(literalStart));
  if (literal !== "") parts.push(literal);
  return { parts, variableNames: [...names] };
}
