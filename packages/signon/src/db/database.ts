import type { NodePgQueryResultHKT } from "drizzle-orm/node-postgres";
import type { PgDatabase } from "drizzle-orm/pg-core";
import type * as schema from "./schema.js";

/** The Sign-on database, or a transaction on it: what every repository function takes. */
export type SignonDatabase = PgDatabase<NodePgQueryResultHKT, typeof schema>;
