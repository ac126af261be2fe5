import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import type pg from "pg";
// Transactions that always give their connection back, even when BEGIN fails (see the file).
import "./drizzle-transactions.js";

/** A drizzle database over a `pg.Pool`. */
export type Database<TSchema extends Record<string, unknown> = Record<string, never>> = NodePgDatabase<TSchema> & {
  $client: pg.Pool;
};

/**
 * Creates a drizzle-orm database (`drizzle-orm/node-postgres`) over a pool.
 * Pass the service's schema module to use drizzle's relational queries
 * (`db.query.<table>`); plain `select`/`insert` work without it.
 */
export function createDrizzle<TSchema extends Record<string, unknown> = Record<string, never>>(
  pool: pg.Pool,
  schema?: TSchema,
): Database<TSchema> {
  return schema === undefined ? (drizzle({ client: pool }) as Database<TSchema>) : drizzle({ client: pool, schema });
}
