import type pg from "pg";

/**
 * Whether the server behind `pool` is the embedded PGlite server, which serves
 * every connection from one session: session state (named prepared statements,
 * `SET`, `LISTEN`) is shared there, so callers must not rely on it. True for a
 * connection string that points at an embedded server too.
 */
export async function servesOneSession(pool: pg.Pool): Promise<boolean> {
  const result = await pool.query<{ version: string }>("select version() as version");
  return result.rows[0]?.version.includes("PGlite") ?? false;
}

/**
 * A service's configuration as the opened database allows it: named prepared
 * statements need a session per connection, which the embedded server (however
 * it was reached) does not give, so they are off there whatever was asked.
 */
export function fitConfigToDatabase<TConfig extends { readonly preparedStatements: boolean }>(
  config: TConfig,
  database: { readonly embedded: boolean },
): TConfig {
  return database.embedded && config.preparedStatements ? { ...config, preparedStatements: false } : config;
}
