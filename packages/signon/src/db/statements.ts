import type pg from "pg";

/** One fixed SQL statement of a hot path: a stable name and constant text with `$n` parameters. */
export interface FixedStatement {
  name: string;
  text: string;
}

/** Runs fixed statements on the pool. */
export interface StatementRunner {
  run<Row extends object>(statement: FixedStatement, values: readonly unknown[]): Promise<Row[]>;
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
      const result = await pool.query<Row>({ ...(prepare ? { name: statement.name } : {}), text: statement.text, values: [...values] });
      return result.rows;
    },
  };
}
