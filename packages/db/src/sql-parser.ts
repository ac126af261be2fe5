/** A node of PostgreSQL's parse tree, as libpg-query gives it: `{ TypeName: { …fields } }` or a field's object. */
export type ParseNode = Record<string, unknown>;

/** One statement of a SQL text, as PostgreSQL's own parser reads it. */
export interface ParsedStatement {
  /** The statement's node type: `AlterTableStmt`, `IndexStmt`, … */
  type: string;
  /** Its fields. */
  node: ParseNode;
  /** Its text, without the semicolon, trimmed. */
  text: string;
}

type Parse = (sql: string) => Promise<{ stmts?: { stmt?: ParseNode; stmt_location?: number; stmt_len?: number }[] }>;

let parser: Promise<Parse> | undefined;

/**
 * PostgreSQL's parser (libpg-query: the server's own grammar compiled to
 * WebAssembly), loaded at the first call only: the module compiles its 1.7 MB
 * of WebAssembly when imported, which a service starting with nothing to
 * migrate should not pay.
 */
function loadParser(): Promise<Parse> {
  parser ??= import("libpg-query").then((module) => module.parse as unknown as Parse);
  return parser;
}

/**
 * Splits `sql` into its statements and parses each, with the grammar of the
 * PostgreSQL version libpg-query carries (18, a superset of 15's). Comments
 * are not statements: a text of comments only has none.
 *
 * @throws an Error with the parser's message when `sql` is not valid SQL.
 */
export async function parseStatements(sql: string): Promise<ParsedStatement[]> {
  if (sql.trim() === "") return [];
  const parse = await loadParser();
  const result = await parse(sql);
  // Locations are byte offsets in the UTF-8 text.
  const bytes = Buffer.from(sql, "utf8");
  return (result.stmts ?? []).flatMap((entry) => {
    const stmt = entry.stmt ?? {};
    const [type] = Object.keys(stmt);
    if (type === undefined) return [];
    const start = entry.stmt_location ?? 0;
    const end = entry.stmt_len === undefined || entry.stmt_len === 0 ? bytes.length : start + entry.stmt_len;
    return [{ type, node: stmt[type] as ParseNode, text: bytes.subarray(start, end).toString("utf8").trim() }];
  });
}

/** Every node under `node` (itself included) whose type is `type`, depth first. */
export function nodesOf(node: unknown, type: string): ParseNode[] {
  const found: ParseNode[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (value !== null && typeof value === "object") {
      for (const [key, child] of Object.entries(value)) {
        if (key === type && child !== null && typeof child === "object") found.push(child as ParseNode);
        visit(child);
      }
    }
  };
  visit(node);
  return found;
}

/** The `sval`s of a list of `String` nodes (a qualified name), joined with dots. */
export function qualifiedName(names: unknown): string {
  if (!Array.isArray(names)) return "";
  return names
    .map((item) => ((item as { String?: { sval?: string } }).String?.sval ?? ""))
    .filter((part) => part !== "")
    .join(".");
}

/** `schema.name` of a `RangeVar` (a table reference), or just `name` when unqualified. */
export function relationName(rangeVar: unknown): string {
  const relation = (rangeVar ?? {}) as { schemaname?: string; relname?: string };
  return relation.schemaname === undefined ? (relation.relname ?? "") : `${relation.schemaname}.${relation.relname ?? ""}`;
}
