import type pg from "pg";
import Cursor from "pg-cursor";

/** One fixed SQL statement of a hot path: a stable name and constant text with `$n` parameters. */
export interface FixedStatement {
  name: string;
  text: string;
}

/** Runs fixed statements on the pool. */
export interface StatementRunner {
  run<Row extends object>(statement: FixedStatement, values: readonly unknown[]): Promise<Row[]>;
  /**
   * Reads a query's rows through a server-side cursor, `batchSize` at a time,
   * each row an array of values with `pg`'s usual types: the memory it takes
   * is two batches (the one given and the next, read meanwhile), however many
   * rows there are. The connection is held until
   * the last batch has been read or the iteration stops.
   */
  cursor(query: { text: string; values: readonly unknown[] }, batchSize: number): AsyncGenerator<unknown[][], void, undefined>;
}

/**
 * A runner over a `pg` pool. With `prepare`, each statement becomes a named
 * prepared statement, parsed and planned once per connection instead of on
 * every request. Without it they stay unnamed: for a connection pooler in
 * transaction mode, which does not keep a session per connection.
 */
export function statementRunner(pool: pg.Pool, prepare: boolean): StatementRunner {
  return {
    async run<Row extends object>(statement: FixedStatement, values: readonly unknown[]) {
      // pg copies the query's configuration and does not change the values.
      const parameters = values as unknown[];
      const result = await pool.query<Row>(prepare ? { name: statement.name, text: statement.text, values: parameters } : { text: statement.text, values: parameters });
      return result.rows;
    },
    async *cursor(query, batchSize) {
      const client = await pool.connect();
      let broken: Error | undefined;
      const cursor = client.query(new Cursor<unknown[]>(query.text, [...query.values], { rowMode: "array" }));
      // One batch is asked for ahead: the server reads it while the caller works on the one before.
      let ahead: Promise<unknown[][]> | undefined;
      try {
        ahead = cursor.read(batchSize);
        for (;;) {
          const rows = await ahead;
          ahead = undefined;
          if (rows.length === 0) return;
          ahead = cursor.read(batchSize);
          yield rows;
        }
      } catch (error) {
        broken = error instanceof Error ? error : new Error(String(error));
        throw error;
      } finally {
        // A caller that stops early leaves a batch on its way: it is taken before the cursor closes.
        if (ahead !== undefined) await ahead.catch((error: unknown) => (broken ??= error instanceof Error ? error : new Error(String(error))));
        if (broken === undefined) await cursor.close().catch((error: unknown) => (broken = error instanceof Error ? error : new Error(String(error))));
        // A connection whose cursor failed is not given back to the pool as it is.
        client.release(broken);
      }
    },
  };
}
