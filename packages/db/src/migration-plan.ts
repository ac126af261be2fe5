import { nodesOf, parseStatements, relationName, type ParsedStatement, type ParseNode } from "./sql-parser.js";

/**
 * How a statement of a migration runs: in the migration's transaction, alone
 * outside any transaction (PostgreSQL refuses `CREATE INDEX CONCURRENTLY` in
 * one), or as a batch run again, each time in a transaction of its own, until
 * it changes no row.
 */
export type StatementMode = "transaction" | "alone" | "batch";

/** One statement of a migration that runs step by step. */
export interface MigrationStep {
  mode: Exclude<StatementMode, "transaction">;
  text: string;
  /** For `CREATE INDEX CONCURRENTLY`: the index, so that one left invalid by an earlier attempt is dropped first. */
  index?: { schema: string | null; name: string };
  /** For `DROP INDEX CONCURRENTLY IF EXISTS`-like steps and batches: the table or index concerned, for messages. */
  target?: string;
}

/**
 * How a migration runs: its statements in one transaction (almost every
 * migration), or step by step outside a transaction when it holds statements
 * that cannot run in one, or batches. A migration of the second form holds
 * only such statements (and `ANALYZE`): each can be run again after a failure
 * half-way, which a mix with ordinary statements could not.
 */
export type MigrationPlan = { mode: "transaction" } | { mode: "steps"; steps: MigrationStep[] } | { mode: "mixed"; statements: string[] };

/** Whether `VacuumStmt` is `ANALYZE` (not `VACUUM`). */
export function isAnalyze(statement: ParsedStatement): boolean {
  return statement.type === "VacuumStmt" && statement.node["is_vacuumcmd"] !== true;
}

function hasOption(options: unknown, name: string): boolean {
  return Array.isArray(options) && options.some((option) => (option as { DefElem?: { defname?: string } }).DefElem?.defname === name);
}

/** Whether PostgreSQL refuses to run `statement` inside a transaction block. */
export function runsAlone(statement: ParsedStatement): boolean {
  switch (statement.type) {
    case "IndexStmt":
    case "DropStmt":
      return statement.node["concurrent"] === true;
    case "ReindexStmt":
      return hasOption(statement.node["params"], "concurrently");
    case "VacuumStmt":
      return statement.node["is_vacuumcmd"] === true;
    default:
      return false;
  }
}

/**
 * Whether `statement` is a batch: an `UPDATE` or `DELETE` whose rows are
 * chosen by a sub-select with a `WHERE` (what is left to do) and a `LIMIT`
 * (how many at a time), in its `WHERE`, `FROM`, `USING` or `WITH`. Run until it
 * changes nothing, it goes through a table a batch at a time, each batch's
 * row locks held only for its own short transaction.
 */
export function isBatch(statement: ParsedStatement): boolean {
  if (statement.type !== "UpdateStmt" && statement.type !== "DeleteStmt") return false;
  const choosing = [statement.node["whereClause"], statement.node["fromClause"], statement.node["usingClause"], statement.node["withClause"]];
  return nodesOf(choosing, "SelectStmt").some((select) => select["limitCount"] !== undefined && select["whereClause"] !== undefined);
}

/** How `statement` runs. */
export function statementMode(statement: ParsedStatement): StatementMode {
  if (runsAlone(statement)) return "alone";
  if (isBatch(statement)) return "batch";
  return "transaction";
}

function stepOf(statement: ParsedStatement, mode: Exclude<StatementMode, "transaction">): MigrationStep {
  const step: MigrationStep = { mode, text: statement.text };
  if (statement.type === "IndexStmt" && typeof statement.node["idxname"] === "string") {
    const schema = (statement.node["relation"] as ParseNode | undefined)?.["schemaname"];
    step.index = { schema: typeof schema === "string" ? schema : null, name: statement.node["idxname"] };
  }
  const relation = statement.node["relation"];
  if (relation !== undefined) step.target = relationName(relation);
  return step;
}

/** How the statements `statements` of one migration run (see {@link MigrationPlan}). */
export function planStatements(statements: readonly ParsedStatement[]): MigrationPlan {
  const modes = statements.map(statementMode);
  if (modes.every((mode) => mode === "transaction")) return { mode: "transaction" };
  const ordinary = statements.filter((statement, index) => modes[index] === "transaction" && !isAnalyze(statement));
  if (ordinary.length > 0) return { mode: "mixed", statements: ordinary.map((statement) => statement.text) };
  return {
    mode: "steps",
    steps: statements.map((statement, index) => stepOf(statement, modes[index] === "transaction" ? "alone" : (modes[index] as Exclude<StatementMode, "transaction">))),
  };
}

/**
 * How the migration `sql` runs. Only a text that names `CONCURRENTLY`,
 * `VACUUM`, or `LIMIT` or `FETCH` beside `UPDATE` or `DELETE` can hold a statement that
 * does not run in the transaction, so any other is not parsed: a start with
 * ordinary migrations to apply does not load the parser.
 */
export async function planMigration(sql: string): Promise<MigrationPlan> {
  const mayNeedSteps = /\b(concurrently|vacuum)\b/i.test(sql) || (/\b(limit|fetch)\b/i.test(sql) && /\b(update|delete)\b/i.test(sql));
  if (!mayNeedSteps) return { mode: "transaction" };
  return planStatements(await parseStatements(sql));
}
