import pg from "pg";

/** Runs one statement on a connection of its own, then closes it: for looking at a server's data from outside. */
export async function queryOnce<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}
