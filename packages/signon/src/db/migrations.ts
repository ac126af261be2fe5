import { fileURLToPath } from "node:url";
import type { MigrationSet } from "@tessera/db";

/** Sign-on's drizzle-kit migrations, for `runMigrations` of `@tessera/db`. */
export const signonMigrations: MigrationSet = {
  schema: "signon",
  folder: fileURLToPath(new URL("../../migrations", import.meta.url)),
};
