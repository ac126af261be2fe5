import type { QueryArrayConfig } from "pg";
import type { Database } from "../db/database.js";

/** What runs a fixed statement: the pg pool under the drizzle instance. */
interface ArrayQueryable {
  query(config: QueryArrayConfig): Promise<{ rows: unknown[][] }>;
}

/**
 * Runs the hot read queries as fixed SQL texts, with rows as arrays: no query
 * building per request, less parsing. They are named prepared statements
 * (parsed and planned once per connection), unless turned off for a
 * connection pooler that cannot keep them: then they stay unnamed.
 */
export class FixedStatements {
  readonly #db: Database;

  constructor(
    db: Database,
    /** Whether to name (and so prepare) the statements. */
    readonly prepared: boolean,
  ) {
    this.#db = db;
  }

  /** The rows of the statement `name` (`text`) with `values`, each an array in select-list order. */
  async rows(name: string, text: string, values: unknown[]): Promise<unknown[][]> {
    const client = (this.#db as unknown as { $client: ArrayQueryable }).$client;
    const config: QueryArrayConfig = this.prepared ? { name, text, values, rowMode: "array" } : { text, values, rowMode: "array" };
    return (await client.query(config)).rows;
  }
}
