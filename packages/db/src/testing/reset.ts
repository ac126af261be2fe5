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
