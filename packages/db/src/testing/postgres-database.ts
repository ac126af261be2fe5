import pg from "pg";

/**
 * The name of this test worker's database on a PostgreSQL server:
 * `<base>_<label>_w<VITEST_POOL_ID>`, lower case, at most 63 bytes.
 */
export function workerDatabaseName(baseUrl: string, label: string, workerId: string): string {
  const base = decodeURIComponent(new URL(baseUrl).pathname.slice(1)) || "postgres";
  const name = `${base}_${label}_w${workerId}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  return name.slice(0, 63);
}

/** The same connection string with another database name. */
export function withDatabase(baseUrl: string, database: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

/**
 * Drops and creates a database through the server of `baseUrl` (connected as
 * in `baseUrl`, which must be allowed to create databases). Returns its
 * connection string.
 */
export async function recreateDatabase(baseUrl: string, database: string): Promise<string> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    const quoted = `"${database.replaceAll('"', '""')}"`;
    await client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${quoted}`);
  } finally {
    await client.end();
  }
  return withDatabase(baseUrl, database);
}

/** Drops a database through the server of `baseUrl`, disconnecting its sessions. */
export async function dropDatabase(baseUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${database.replaceAll('"', '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
