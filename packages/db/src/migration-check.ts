import { isAnalyze, planStatements } from "./migration-plan.js";
import { nodesOf, parseStatements, qualifiedName, relationName, type ParsedStatement, type ParseNode } from "./sql-parser.js";

/**
 * What the check of {@link checkMigration} refuses in a migration that runs
 * while the previous release still serves requests.
 */
export type MigrationRule =
  | "drop"
  | "drop-column"
  | "rename"
  | "set-not-null"
  | "not-null-without-default"
  | "volatile-default"
  | "alter-column-type"
  | "drop-default"
  | "new-constraint"
  | "validated-under-lock"
  | "index-not-concurrent"
  | "rewrite"
  | "truncate"
  | "lock"
  | "unbatched-write"
  | "opaque"
  | "transaction-control"
  | "setting"
  | "mixed"
  | "unknown";

/** One statement refused, and why. */
export interface MigrationFinding {
  rule: MigrationRule;
  /** The statement, cut to its first 160 characters. */
  statement: string;
  /** What it would do to the previous release, and what to write instead. */
  why: string;
}

const POST_DEPLOY = "it belongs in migrations-post-deploy, run once no instance of the previous release remains";

/** Statements that add, or change nothing the previous release relies on; any other type is refused as unknown. */
const HARMLESS = new Set([
  "CreateStmt",
  "CreateTableAsStmt",
  "CreateSchemaStmt",
  "CreateSeqStmt",
  "AlterSeqStmt",
  "CreateFunctionStmt",
  "AlterFunctionStmt",
  "CreateTrigStmt",
  "CreateEnumStmt",
  "AlterEnumStmt",
  "CompositeTypeStmt",
  "CreateDomainStmt",
  "CommentStmt",
  "GrantStmt",
  "AlterDefaultPrivilegesStmt",
  "CreateExtensionStmt",
  "ViewStmt",
  "CreatePolicyStmt",
  "CreateStatsStmt",
  "AlterStatsStmt",
  "DefineStmt",
  "CreateCastStmt",
  "AlterOwnerStmt",
  "InsertStmt",
]);

/** Functions that a column default may call without PostgreSQL computing it row by row (they are not volatile). */
const STABLE_DEFAULT_FUNCTIONS = new Set(["now", "transaction_timestamp", "statement_timestamp"]);

const SERIAL_TYPES = new Set(["serial", "serial2", "serial4", "serial8", "smallserial", "bigserial"]);

function excerpt(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 160 ? `${line.slice(0, 157)}…` : line;
}

/** The column definition's constraints by type. */
function constraintsOf(column: ParseNode): ParseNode[] {
  const constraints = column["constraints"];
  return Array.isArray(constraints) ? constraints.map((item) => (item as { Constraint: ParseNode }).Constraint).filter((item) => item !== undefined) : [];
}

/** A default that PostgreSQL must compute for each existing row: it calls a function that may be volatile. */
function volatileCall(expression: unknown): string | null {
  for (const call of nodesOf(expression, "FuncCall")) {
    const name = qualifiedName(call["funcname"]).replace(/^pg_catalog\./, "");
    if (!STABLE_DEFAULT_FUNCTIONS.has(name)) return `${name}()`;
  }
  return nodesOf(expression, "SubLink").length > 0 ? "a sub-select" : null;
}

function checkAddColumn(table: string, column: ParseNode, refuse: (rule: MigrationRule, why: string) => void): void {
  const name = `${table}.${String(column["colname"])}`;
  const constraints = constraintsOf(column);
  const typeName = qualifiedName((column["typeName"] as ParseNode | undefined)?.["names"]).replace(/^pg_catalog\./, "");
  const defaultExpression = constraints.find((constraint) => constraint["contype"] === "CONSTR_DEFAULT")?.["raw_expr"];
  if (constraints.some((constraint) => constraint["contype"] === "CONSTR_NOTNULL") && defaultExpression === undefined) {
    refuse("not-null-without-default", `adds ${name} NOT NULL without a default: the previous release's inserts leave it out and fail (add it nullable, or with a constant default)`);
  }
  const volatile = defaultExpression === undefined ? null : volatileCall(defaultExpression);
  if (volatile !== null) {
    refuse("volatile-default", `adds ${name} with a default computed for each row (${volatile}): PostgreSQL rewrites the whole table under an exclusive lock (add it without the default, set the default, then fill the existing rows in batches)`);
  }
  if (SERIAL_TYPES.has(typeName) || constraints.some((constraint) => constraint["contype"] === "CONSTR_IDENTITY" || constraint["contype"] === "CONSTR_GENERATED")) {
    refuse("volatile-default", `adds ${name} filled for each row (${typeName === "" ? "generated" : typeName}): PostgreSQL rewrites the whole table under an exclusive lock`);
  }
  for (const constraint of constraints) {
    const kind = String(constraint["contype"]);
    if (["CONSTR_PRIMARY", "CONSTR_UNIQUE", "CONSTR_CHECK", "CONSTR_EXCLUSION"].includes(kind)) {
      refuse("new-constraint", `adds ${name} with a ${kind.slice(7).toLowerCase()} constraint, checked against every row under an exclusive lock`);
    } else if (kind === "CONSTR_FOREIGN") {
      refuse("validated-under-lock", `adds ${name} with a foreign key checked against every row while writes wait (add the column, then the key NOT VALID, then VALIDATE CONSTRAINT)`);
    }
  }
}

function checkAlterTable(statement: ParsedStatement, created: ReadonlySet<string>, refuse: (rule: MigrationRule, why: string) => void): void {
  const table = relationName(statement.node["relation"]);
  if (created.has(table)) return;
  const commands = (statement.node["cmds"] as { AlterTableCmd?: ParseNode }[] | undefined) ?? [];
  for (const command of commands.map((item) => item.AlterTableCmd ?? {})) {
    const subtype = String(command["subtype"]);
    const column = `${table}.${String(command["name"] ?? "")}`;
    switch (subtype) {
      case "AT_AddColumn":
        checkAddColumn(table, (command["def"] as { ColumnDef?: ParseNode } | undefined)?.ColumnDef ?? {}, refuse);
        break;
      case "AT_DropColumn":
        refuse("drop-column", `drops ${column}: the previous release still reads or writes it; ${POST_DEPLOY}`);
        break;
      case "AT_SetNotNull":
        refuse("set-not-null", `makes ${column} NOT NULL: the previous release may still write NULL there, and every row is checked under an exclusive lock; ${POST_DEPLOY}`);
        break;
      case "AT_AlterColumnType":
        refuse("alter-column-type", `changes the type of ${column}: PostgreSQL rewrites or checks the table under an exclusive lock, and the previous release reads and writes the old type; add a new column instead`);
        break;
      case "AT_ColumnDefault":
        if (command["def"] === undefined) refuse("drop-default", `drops the default of ${column}: the previous release's inserts rely on it; ${POST_DEPLOY}`);
        break;
      case "AT_AddConstraint": {
        const constraint = (command["def"] as { Constraint?: ParseNode } | undefined)?.Constraint ?? {};
        const name = String(constraint["conname"] ?? "");
        if (constraint["contype"] === "CONSTR_FOREIGN") {
          if (constraint["skip_validation"] !== true) {
            refuse("validated-under-lock", `adds foreign key ${name} to ${table}, checked against every row while writes wait: add it NOT VALID, then VALIDATE CONSTRAINT ${name} in a statement of its own`);
          }
        } else {
          refuse("new-constraint", `adds constraint ${name} to ${table}: the previous release may write rows it refuses; ${POST_DEPLOY}`);
        }
        break;
      }
      case "AT_AddIndexConstraint":
      case "AT_AddIndex":
        refuse("new-constraint", `adds a constraint to ${table}: the previous release may write rows it refuses; ${POST_DEPLOY}`);
        break;
      case "AT_DropConstraint":
        refuse("drop", `drops constraint ${String(command["name"])} of ${table}: the previous release may rely on it (a unique key for ON CONFLICT); ${POST_DEPLOY}`);
        break;
      case "AT_SetTableSpace":
      case "AT_SetLogged":
      case "AT_SetUnLogged":
      case "AT_SetAccessMethod":
        refuse("rewrite", `rewrites ${table} under an exclusive lock (${subtype.slice(3)})`);
        break;
      case "AT_ValidateConstraint":
      case "AT_SetStatistics":
      case "AT_SetOptions":
      case "AT_ResetOptions":
      case "AT_SetStorage":
      case "AT_SetCompression":
      case "AT_DropNotNull":
      case "AT_SetRelOptions":
      case "AT_ResetRelOptions":
      case "AT_ChangeOwner":
        break;
      default:
        refuse("unknown", `ALTER TABLE ${table} ${subtype.slice(3)}: not known to be safe while the previous release runs; ${POST_DEPLOY}, or extend the check`);
    }
  }
}

/** `DROP …` of things not created by this migration. */
function checkDrop(statement: ParsedStatement, created: ReadonlySet<string>, refuse: (rule: MigrationRule, why: string) => void): void {
  const kind = String(statement.node["removeType"]).replace(/^OBJECT_/, "").toLowerCase();
  const objects = (statement.node["objects"] as unknown[] | undefined) ?? [];
  const names = objects.map((object) => qualifiedName((object as { List?: { items?: unknown } }).List?.items ?? []));
  if (kind === "table" && names.every((name) => created.has(name))) return;
  refuse("drop", `drops ${kind} ${names.filter((name) => name !== "").join(", ")}: the previous release may still use it; ${POST_DEPLOY}`);
}

/** A top-level `SELECT` that calls a function of a schema: what the function does cannot be checked. */
function callsOwnFunction(statement: ParsedStatement): string | null {
  for (const call of nodesOf(statement.node, "FuncCall")) {
    const name = qualifiedName(call["funcname"]);
    if (name.includes(".") && !name.startsWith("pg_catalog.")) return name;
  }
  return null;
}

function checkStatement(statement: ParsedStatement, created: Set<string>, refuse: (rule: MigrationRule, why: string) => void): void {
  const node = statement.node;
  switch (statement.type) {
    case "CreateStmt":
    case "CreateTableAsStmt": {
      const relation = node["relation"] ?? (node["into"] as ParseNode | undefined)?.["rel"];
      created.add(relationName(relation));
      return;
    }
    case "AlterTableStmt":
      return checkAlterTable(statement, created, refuse);
    case "DropStmt":
      return checkDrop(statement, created, refuse);
    case "RenameStmt":
    case "AlterObjectSchemaStmt":
      return refuse("rename", `renames or moves ${String(node["renameType"] ?? node["objectType"] ?? "").replace(/^OBJECT_/, "").toLowerCase()} ${relationName(node["relation"])}: the previous release knows only the old name (add the new beside the old; drop the old later, post-deploy)`);
    case "IndexStmt": {
      const table = relationName(node["relation"]);
      if (created.has(table)) return;
      if (node["concurrent"] !== true) {
        refuse("index-not-concurrent", `builds index ${String(node["idxname"] ?? "")} on ${table} holding a lock that blocks every write to it until the build ends: use CREATE INDEX CONCURRENTLY, in a migration of its own`);
      }
      if (node["unique"] === true) refuse("new-constraint", `adds a unique index on ${table}: the previous release may write rows it refuses; ${POST_DEPLOY}`);
      return;
    }
    case "ReindexStmt":
      if (!nodesOf(node["params"], "DefElem").some((option) => option["defname"] === "concurrently")) {
        refuse("rewrite", `rebuilds indexes holding a lock that blocks writes: use REINDEX … CONCURRENTLY`);
      }
      return;
    case "VacuumStmt":
      if (!isAnalyze(statement)) refuse("rewrite", `VACUUM: autovacuum's work (VACUUM FULL rewrites the table under an exclusive lock)`);
      return;
    case "ClusterStmt":
    case "RefreshMatViewStmt":
      return refuse("rewrite", `${statement.type === "ClusterStmt" ? "CLUSTER rewrites a table" : "REFRESH MATERIALIZED VIEW rebuilds a view"} under an exclusive lock`);
    case "TruncateStmt":
      return refuse("truncate", `empties ${nodesOf(node["relations"], "RangeVar").map(relationName).join(", ")}: the previous release still uses the rows; ${POST_DEPLOY}`);
    case "LockStmt":
      return refuse("lock", `LOCK TABLE holds a lock until the migration ends; the runner's lock timeout is there instead`);
    case "UpdateStmt":
    case "DeleteStmt":
    case "MergeStmt": {
      const table = relationName(node["relation"]);
      if (created.has(table)) return;
      if (statement.type !== "MergeStmt" && planStatements([statement]).mode === "steps") return;
      return refuse(
        "unbatched-write",
        `${statement.type.replace("Stmt", "").toUpperCase()} of ${table} changes every matching row in one transaction, holding their locks until the migration ends: write it as a batch (… WHERE key IN (SELECT key FROM ${table} WHERE <not done yet> LIMIT 1000)), which is run again until it changes nothing`,
      );
    }
    case "SelectStmt": {
      const called = callsOwnFunction(statement);
      if (called !== null) refuse("opaque", `calls ${called}, whose statements cannot be checked: write them in the migration`);
      return;
    }
    case "DoStmt":
    case "CallStmt":
      return refuse("opaque", `${statement.type === "DoStmt" ? "a DO block" : "CALL"} runs statements that cannot be checked: write them in the migration`);
    case "TransactionStmt":
      return refuse("transaction-control", `BEGIN, COMMIT and savepoints belong to the migration runner, which runs each migration in a transaction of its own`);
    case "VariableSetStmt":
      return refuse("setting", `SET ${String(node["name"] ?? "")}: the runner sets what a migration runs with (its lock timeout above all)`);
    default:
      if (!HARMLESS.has(statement.type)) refuse("unknown", `${statement.type}: not known to be safe while the previous release runs; ${POST_DEPLOY}, or extend the check`);
  }
}

/**
 * Checks a migration that runs while instances of the previous release still
 * serve requests (a migration of the first kind, in a service's `migrations`
 * folder), statement by statement as PostgreSQL's own parser reads them, and
 * returns what would break that release or stall its requests: removing or
 * renaming what it uses, a constraint it may not meet (`NOT NULL`, unique,
 * check), a type change, a default computed row by row, a table rewritten or
 * locked for long (an index built without `CONCURRENTLY`, a write of many rows
 * in one transaction), and statements whose effect cannot be read (a `DO`
 * block). Tables created by the same migration are exempt: nothing uses them
 * yet. Comments play no part.
 *
 * @throws when `sql` is not valid PostgreSQL.
 */
export async function checkMigration(sql: string): Promise<MigrationFinding[]> {
  const statements = await parseStatements(sql);
  const findings: MigrationFinding[] = [];
  const created = new Set<string>();
  for (const statement of statements) {
    checkStatement(statement, created, (rule, why) => findings.push({ rule, statement: excerpt(statement.text), why }));
  }
  const plan = planStatements(statements);
  if (plan.mode === "mixed") {
    findings.push({
      rule: "mixed",
      statement: excerpt(plan.statements[0] ?? ""),
      why: "statements that run outside a transaction (CONCURRENTLY) or as batches share this migration with others: give them a migration of their own, so that one stopped half-way can be run again",
    });
  }
  return findings;
}
