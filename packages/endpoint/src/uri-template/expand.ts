import type { Expression, ParsedTemplate, VariableSpec } from "./parse-template.js";
import type { OperatorBehaviour } from "./operators.js";

/** Variable values for expansion: strings, numbers, booleans, lists or associative arrays. */
export type TemplateContext = Readonly<Record<string, unknown>>;

function isDefined(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** First `length` characters (code points, not UTF-16 units) of `text`. */
function prefixOf(text: string, length: number): string {
  if (text.length <= length) return text;
  let end = 0;
  for (let count = 0; count < length && end < text.length; count++) {
    const code = text.charCodeAt(end);
    end += code >= 0xd800 && code <= 0xdbff && end + 1 < text.length ? 2 : 1;
  }
  return text.slice(0, end);
}

function namedValue(operator: OperatorBehaviour, encodedName: string, text: string): string {
  return text === "" ? encodedName + operator.ifEmpty : encodedName + "=" + operator.encode(text);
}

/**
 * A list (keys undefined) or associative array (keys given) variable. Exploded,
 * each member is one value (`name=value` when named); otherwise the members are
 * joined with commas after a single `name=`.
 */
function expandComposite(operator: OperatorBehaviour, variable: VariableSpec, values: readonly unknown[], keys?: readonly string[]): string | undefined {
  const items: string[] = [];
  values.forEach((value, index) => {
    if (!isDefined(value)) return;
    const text = String(value);
    const key = keys?.[index];
    if (!variable.explode) {
      if (key !== undefined) items.push(operator.encode(key));
      items.push(operator.encode(text));
    } else if (key !== undefined) {
      items.push(namedValue(operator, operator.encode(key), text));
    } else {
      items.push(operator.named ? namedValue(operator, variable.encodedName, text) : operator.encode(text));
    }
  });
  if (items.length === 0) return undefined;
  if (variable.explode) return items.join(operator.separator);
  return (operator.named ? variable.encodedName + "=" : "") + items.join(",");
}

function expandVariable(operator: OperatorBehaviour, variable: VariableSpec, value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
    case "bigint": {
      const text = variable.prefix === -1 ? String(value) : prefixOf(String(value), variable.prefix);
      return operator.named ? namedValue(operator, variable.encodedName, text) : operator.encode(text);
    }
    case "object":
      if (value === null) return undefined;
      if (Array.isArray(value)) return expandComposite(operator, variable, value);
      return expandComposite(operator, variable, Object.values(value), Object.keys(value));
    default:
      return undefined;
  }
}

/**
 * Expands one expression. Undefined variables, empty lists and associative
 * arrays without defined values contribute nothing, not even a separator.
 * @see https://www.rfc-editor.org/rfc/rfc6570#section-3.2.1
 */
export function expandExpression(expression: Expression, context: TemplateContext): string {
  const operator = expression.operator;
  let expanded = "";
  let written = false;
  for (const variable of expression.variables) {
    const piece = expandVariable(operator, variable, context[variable.name]);
    if (piece === undefined) continue;
    expanded += (written ? operator.separator : operator.first) + piece;
    written = true;
  }
  return expanded;
}

/**
 * Expands a parsed URI template with the given variable values (RFC 6570, levels 1 to 4).
 * @see https://www.rfc-editor.org/rfc/rfc6570#section-3
 */
export function expandTemplate(template: ParsedTemplate, context: TemplateContext): string {
  let expanded = "";
  for (const part of template.parts) {
    expanded += typeof part === "string" ? part : expandExpression(part, context);
  }
  return expanded;
}
