import { fileURLToPath } from "node:url";

export { PostgresUserStore } from "./postgres-user-store.js";
export { PostgresSessionStore } from "./postgres-session-store.js";
export * as signonClientTables from "./schema.js";

/** The PostgreSQL schema that holds the Sign-on client's tables. */
export const SIGNON_CLIENT_SCHEMA = "signon_client";

/**
 * The drizzle-kit migrations of the Sign-on client's tables, in the shape
 * `runMigrations` of `@tessera/db` takes: apply them with the application's own.
 */
export const signonClientMigrations = {
  schema: SIGNON_CLIENT_SCHEMA,
  folder: fileURLToPath(new URL("../../migrations", import.meta.url)),
} as const;
