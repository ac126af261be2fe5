import { withDatabase } from "@tessera/db/testing";

/** The same server's `name` database: `url` with its path replaced (its query, the TLS settings, kept). */
export const inDatabase = withDatabase;
