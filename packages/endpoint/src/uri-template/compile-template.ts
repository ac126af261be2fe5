import { encodeReserved, encodeUnreserved } from "./encode.js";

/** Variable values for expansion: strings, numbers, booleans, lists or associative arrays. */
export type TemplateContext = Readonly<Record<string, unknown>>;

/** A URI template compiled once, to be expanded many times. */
export interface CompiledTemplate {
  /** Expands the template with these variable values (RFC 6570, levels 1 to 4). */
  readonly expand: (context: TemplateContext) => string;
  /** Every variable name the template fills, once each, in order. */
  readonly variableNames: readonly string[];
}

type Expander<Result = string> = (context: TemplateContext) => Result;

/**
 * An expression (braces around one or more characters that are not braces),
 * or a single brace, which opens or closes no expression and is kept as it is
 * written. (Each attempt stops at the next brace: linear time.)
 */
const EXPRESSION_OR_BRACE = /(\{[^{}]+\}|[{}])/;
/** A variable specification: the name, then a prefix `:n` (up to 4 digits) or the explode modifier `*`. */
const VARIABLE_SPEC = /^([^:*]*)(?::(\d{1,4})|(\*))?/;
/** The operator of an expression body, if it has one. */
const OPERATOR = /^[+#./;?&]?/;

/**
 * Compiles an expression body such as `/path:6,list*` into a function of the
 * variable values. Undefined variables, empty lists and associative arrays
 * without defined values contribute nothing, not even a separator.
 * @see https://www.rfc-editor.org/rfc/rfc6570#section-3.2.1
 * @see https://www.rfc-editor.org/rfc/rfc6570#appendix-A (the operator settings)
 */
function compileExpression(body: string, names: Set<string>, unfilledNames: ReadonlySet<string> | undefined): Expander {
  const operator = (OPERATOR.exec(body) as RegExpExecArray)[0];
  /** Written before the first defined value. */
  const first = operator === "+" ? "" : operator;
  /** Written between defined values. */
  const separator = operator === "?" ? "&" : "+#".includes(operator) ? "," : operator;
  /** Whether values are written as `name=value`. */
  const named = operator !== "" && ";?&".includes(operator);
  /** What follows the name of an empty value. */
  const ifEmpty = named && operator !== ";" ? "=" : "";
  const encode = operator === "+" || operator === "#" ? encodeReserved : encodeUnreserved;
  /** A value written on its own: `label=value` (`label` and `ifEmpty` when empty) when it has a label, else the value. */
  const item = (label: string | undefined, text: string) =>
    label === undefined ? encode(text) : label + (text === "" ? ifEmpty : "=" + encode(text));

  const variables: Expander<string | undefined>[] = [];
  for (const spec of body.slice(operator.length).split(",")) {
    const [, name = "", prefix, explode] = VARIABLE_SPEC.exec(spec) as RegExpExecArray;
    if (name === "" || unfilledNames?.has(name)) continue;
    names.add(name);
    const encodedName = encodeUnreserved(name);
    const ownLabel = named ? encodedName : undefined;
    variables.push((context) => {
      const value = context[name];
      if (value === undefined || value === null || typeof value === "function" || typeof value === "symbol") return undefined;
      if (typeof value !== "object") {
        // A prefix counts characters (code points), never splitting a surrogate pair.
        return item(ownLabel, prefix ? [...String(value)].slice(0, Number(prefix)).join("") : String(value));
      }
      // A list, or an associative array, whose keys are written too: as labels when exploded, else before each value.
      const isList = Array.isArray(value);
      const items: string[] = [];
      for (const key of isList ? value.keys() : Object.keys(value)) {
        const member = (value as Record<string | number, unknown>)[key];
        if (member === undefined || member === null) continue;
        const text = String(member);
        if (explode) items.push(item(isList ? ownLabel : encode(key as string), text));
        else items.push((isList ? "" : encode(key as string) + ",") + encode(text));
      }
      if (items.length === 0) return undefined;
      return explode ? items.join(separator) : (named ? encodedName + "=" : "") + items.join(",");
    });
  }
  return (context) => {
    let expanded: string | undefined;
    for (const expandVariable of variables) {
      const piece = expandVariable(context);
      if (piece !== undefined) expanded = (expanded === undefined ? first : expanded + separator) + piece;
    }
    return expanded ?? "";
  };
}

/**
 * Compiles an RFC 6570 URI template in one pass over the text: literal text is
 * encoded once (as reserved expansion encodes it), and each expression becomes
 * a function of the variable values. Variables named in `unfilledNames` are
 * never filled; they expand as undefined.
 * @see https://www.rfc-editor.org/rfc/rfc6570#section-2
 */
export function compileTemplate(template: string, unfilledNames?: ReadonlySet<string>): CompiledTemplate {
  const names = new Set<string>();
  // Splitting around expressions and braces leaves literal text at even indexes and those at odd ones.
  const parts = template
    .split(EXPRESSION_OR_BRACE)
    .map((part, index) =>
      index % 2 === 0 ? encodeReserved(part) : part.length === 1 ? part : compileExpression(part.slice(1, -1), names, unfilledNames),
    );
  return {
    expand: (context) => {
      let expanded = "";
      for (const part of parts) expanded += typeof part === "string" ? part : part(context);
      return expanded;
    },
    variableNames: [...names],
  };
}
