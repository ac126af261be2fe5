import { pushSchema } from "drizzle-kit/api";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type pg from "pg";
import { createDrizzle } from "./drizzle.js";

/** Options of {@link databaseSchemaDrift}. */
export interface DatabaseDriftOptions {
  /** The service's schema module (`import * as schema from "./schema.js"`). */
  schema: Record<string, unknown>;
  /** PostgreSQL schemas to compare, e.g. `["signon"]`. */
  schemaFilter: string[];
}

/**
 * The SQL statements that would turn a live database into what the schema
 * module defines, as `drizzle-kit push` computes them by introspection. Run
 * it on a database built from the migrations: an empty list means the
 * migrations (as applied, hand edits included) produce the schema the code
 * declares.
 */
export async function databaseSchemaDrift(pool: pg.Pool, options: DatabaseDriftOptions): Promise<string[]> {
  const db = createDrizzle(pool) as unknown as PgDatabase<PgQueryResultHKT>;
  const result = await withoutProgressOutput(() => pushSchema(options.schema, db, options.schemaFilter));
  return result.statementsToExecute;
}

/** drizzle-kit draws a progress spinner on stdout while it introspects; keep test output clean. */
async function withoutProgressOutput<T>(work: () => Promise<T>): Promise<T> {
  const write = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    return await work();
  } finally {
    process.stdout.write = write;
  }
}
