import type pg from "pg";

/**
 * Empties every table of the given PostgreSQL schemas in one statement
 * (`TRUNCATE … RESTART IDENTITY CASCADE`). Migration bookkeeping lives in
 * schema `drizzle` and is left alone.
 */
export async function truncateSchemas(pool: pg.Pool, schemas: readonly string[]): Promise<void> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
      WHERE schemaname = ANY($1::text[]) ORDER BY schemaname, tablename`,
    [schemas],
  );
  if (rows.length === 0) return;
  await pool.query(`TRUNCATE TABLE ${rows.map((row) => row.name).join(", ")} RESTART IDENTITY CASCADE`);
}

/**
 * What {@link truncateSchemas} does, for a test that empties the same schemas
 * before each of its tests: the same end state (no rows, owned sequences
 * restarted), reached by `DELETE` in foreign key order, which on the few rows
 * a test leaves is several times quicker than `TRUNCATE` (that makes new files
 * for every table and index). The catalog is read once; each call is then one
 * round trip, which also checks that the schemas still have the same tables.
 * Tables with triggers of their own are emptied with those held off (as
 * `TRUNCATE` fires none) when connected as a superuser; otherwise, and for
 * foreign keys in a cycle, the schemas are emptied by `TRUNCATE`.
 */
export function schemaEmptier(pool: pg.Pool, schemas: readonly string[]): () => Promise<void> {
  let plan: Promise<EmptyingPlan> | undefined;
  const empty = async (): Promise<void> => {
    plan ??= planEmptying(pool, schemas).catch((error: unknown) => {
      plan = undefined;
      throw error;
    });
    const { script, signature } = await plan;
    if (script === null) return truncateSchemas(pool, schemas);
    const client = await pool.connect();
    let results: pg.QueryResult[] | pg.QueryResult;
    try {
      results = (await client.query(script)) as unknown as pg.QueryResult[] | pg.QueryResult;
    } catch (error) {
      // Not back into the pool inside a transaction the error broke off.
      client.release(true);
      throw error;
    }
    client.release();
    const last = Array.isArray(results) ? results.at(-1) : results;
    if ((last?.rows[0] as { signature?: string } | undefined)?.signature === signature) return;
    // Tables came or went since the catalog was read (a test's own DDL): read it again, and empty them all.
    plan = undefined;
    await truncateSchemas(pool, schemas);
  };
  return empty;
}

interface EmptyingPlan {
  /** The statements, ending with the signature query; `null` when only `TRUNCATE` will do. */
  script: string | null;
  signature: string;
}

/** Identifies the set of tables of the schemas: changes when one is created or dropped. */
function signatureQuery(schemas: readonly string[]): string {
  const names = schemas.map((schema) => literal(schema)).join(", ");
  return `SELECT count(*) || ':' || coalesce(sum(c.oid::int8), 0) AS signature FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p') AND n.nspname IN (${names})`;
}

async function planEmptying(pool: pg.Pool, schemas: readonly string[]): Promise<EmptyingPlan> {
  const signature = (await pool.query<{ signature: string }>(signatureQuery(schemas))).rows[0]?.signature ?? "";
  const tables = (
    await pool.query<{ oid: string; name: string; triggers: boolean; alwaysTriggers: boolean }>(
      `SELECT c.oid::text AS oid, format('%I.%I', n.nspname, c.relname) AS name,
              EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal) AS triggers,
              EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal AND t.tgenabled = 'A') AS "alwaysTriggers"
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname = ANY($1::text[])
        ORDER BY n.nspname, c.relname`,
      [schemas],
    )
  ).rows;
  if (tables.length === 0 || tables.some((table) => table.alwaysTriggers)) return { script: null, signature };
  // Triggers of their own (which TRUNCATE does not fire) are held off for the DELETEs as replication does it, which
  // takes a superuser, as the test servers' accounts are.
  const triggers = tables.some((table) => table.triggers);
  if (triggers && (await pool.query<{ on: string }>("SELECT current_setting('is_superuser') AS on")).rows[0]?.on !== "on") {
    return { script: null, signature };
  }
  const references = (
    await pool.query<{ child: string; parent: string; restrict: boolean }>(
      `SELECT conrelid::text AS child, confrelid::text AS parent, confdeltype = 'r' AS restrict
         FROM pg_constraint WHERE contype = 'f' AND (conrelid = ANY($1::oid[]) OR confrelid = ANY($1::oid[]))`,
      [tables.map((table) => table.oid)],
    )
  ).rows;
  const known = new Set(tables.map((table) => table.oid));
  // A table outside these schemas that points into them would stop the DELETE (TRUNCATE … CASCADE would empty it).
  if (references.some((reference) => !known.has(reference.child))) return { script: null, signature };
  const order = childrenFirst(tables, references);
  if (order === null) return { script: null, signature };
  const sequences = (
    await pool.query<{ name: string; start: string }>(
      `SELECT format('%I.%I', n.nspname, s.relname) AS name, q.seqstart::text AS start
         FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S' JOIN pg_namespace n ON n.oid = s.relnamespace
         JOIN pg_sequence q ON q.seqrelid = s.oid
        WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
          AND d.refobjid = ANY($1::oid[])
        ORDER BY 1`,
      [tables.map((table) => table.oid)],
    )
  ).rows;
  const statements = [
    ...(triggers ? ["BEGIN", "SET LOCAL session_replication_role = replica"] : []),
    ...order.map((name) => `DELETE FROM ${name}`),
    ...(sequences.length > 0 ? [`SELECT ${sequences.map((sequence) => `setval(${literal(sequence.name)}, ${sequence.start}, false)`).join(", ")}`] : []),
    ...(triggers ? ["COMMIT"] : []),
    signatureQuery(schemas),
  ];
  return { script: statements.join(";\n"), signature };
}

/** Table names with every referencing table before the table it references; `null` for a cycle or a restricting self-reference. */
function childrenFirst(tables: { oid: string; name: string }[], references: { child: string; parent: string; restrict: boolean }[]): string[] | null {
  const parentsOf = new Map<string, Set<string>>(tables.map((table) => [table.oid, new Set<string>()]));
  const waitingOn = new Map<string, number>(tables.map((table) => [table.oid, 0]));
  for (const { child, parent, restrict } of references) {
    if (child === parent) {
      // Rows of one table pointing at each other go in one DELETE: fine unless the key restricts row by row.
      if (restrict) return null;
      continue;
    }
    if (!parentsOf.has(child) || parentsOf.get(child)?.has(parent) || !waitingOn.has(parent)) continue;
    parentsOf.get(child)?.add(parent);
    waitingOn.set(parent, (waitingOn.get(parent) ?? 0) + 1);
  }
  const names = new Map(tables.map((table) => [table.oid, table.name]));
  const ready = tables.filter((table) => waitingOn.get(table.oid) === 0).map((table) => table.oid);
  const order: string[] = [];
  while (ready.length > 0) {
    const oid = ready.shift() as string;
    order.push(names.get(oid) as string);
    for (const parent of parentsOf.get(oid) ?? []) {
      const left = (waitingOn.get(parent) ?? 0) - 1;
      waitingOn.set(parent, left);
      if (left === 0) ready.push(parent);
    }
  }
  return order.length === tables.length ? order : null;
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
