/**
 * What input the service refuses before it reaches validation or
 * PostgreSQL: text that a `text` column cannot hold, and nesting deep enough
 * to overflow a recursive validator. One walk, without recursion, serves the
 * HTTP routes (params, query and body) and the bulk loader (CLI load, admin
 * import, OLX import).
 */

/**
 * The deepest nesting of arrays and objects accepted in a JSON value (the
 * value itself is level 1). A course structure at the deepest allowed
 * (`MAX_TREE_DEPTH`, 100 blocks) needs 2 × 100 + 3 levels in a bulk file.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * A NUL character (PostgreSQL `text` cannot hold one) or a UTF-16 surrogate
 * without its pair (not a character; UTF-8 cannot encode it, so two different
 * inputs would be stored as the same U+FFFD). With the `u` flag a surrogate
 * range only matches unpaired ones.
 */
// eslint-disable-next-line no-control-regex -- finding U+0000 is the point of this pattern
const UNSTORABLE_TEXT = /[\u0000\uD800-\uDFFF]/u;

/** Why a string cannot be stored; null when it can. */
export function unstorableTextReason(text: string): string | null {
  if (!UNSTORABLE_TEXT.test(text)) return null;
  return text.includes("\u0000") ? "contains a NUL character (U+0000)" : "contains an unpaired UTF-16 surrogate";
}

interface Visit {
  readonly value: unknown;
  readonly depth: number;
  readonly parent: Visit | null;
  readonly key: string;
}

/** Where a problem is (`/users/0/username`, `/` for the value itself) and what it is. */
export interface InputProblem {
  readonly path: string;
  readonly reason: string;
}

/** How many leading path segments a problem's path shows, and how much of each, before it elides the rest. */
const SHOWN_SEGMENTS = 8;
const SHOWN_SEGMENT_LENGTH = 64;

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | null = visit; at?.parent; at = at.parent) keys.push(at.key);
  keys.reverse();
  const shown = (keys.length > SHOWN_SEGMENTS ? [...keys.slice(0, SHOWN_SEGMENTS), "…"] : keys).map((key) =>
    key.length > SHOWN_SEGMENT_LENGTH ? `${key.slice(0, SHOWN_SEGMENT_LENGTH)}…` : key,
  );
  return `/${shown.join("/")}`;
}

/**
 * The first problem of a parsed JSON value (or a Fastify params or query
 * object): a string (object keys included) that cannot be stored, or arrays
 * and objects nested deeper than {@link MAX_JSON_DEPTH}; null when there is
 * none. Iterative, so hostile nesting cannot overflow it.
 */
export function findUnstorableInput(value: unknown): InputProblem | null {
  const stack: Visit[] = [{ value, depth: 1, parent: null, key: "" }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const current = visit.value;
    if (typeof current === "string") {
      const reason = unstorableTextReason(current);
      if (reason !== null) return { path: pathOf(visit), reason };
      continue;
    }
    if (typeof current !== "object" || current === null) continue;
    if (visit.depth > MAX_JSON_DEPTH) return { path: pathOf(visit), reason: `is nested more than ${MAX_JSON_DEPTH} levels deep` };
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index -= 1) {
        stack.push({ value: current[index], depth: visit.depth + 1, parent: visit, key: String(index) });
      }
      continue;
    }
    const keys = Object.keys(current);
    for (let index = keys.length - 1; index >= 0; index -= 1) {
      const key = keys[index]!;
      const reason = unstorableTextReason(key);
      if (reason !== null) return { path: pathOf(visit), reason: `has a property name that ${reason}` };
      stack.push({ value: (current as Record<string, unknown>)[key], depth: visit.depth + 1, parent: visit, key });
    }
  }
  return null;
}
