import { fileURLToPath } from "node:url";
import type { MigrationSet } from "@tessera/db";

/**
 * Sign-on's drizzle-kit migrations, for `runMigrations` of `@tessera/db`: those
 * the release before can run against, applied at every start, and the
 * post-deploy ones, applied only by `signon migrate --post-deploy`.
 */
export const signonMigrations: MigrationSet = {
  schema: "signon",
  folder: fileURLToPath(new URL("../../migrations", import.meta.url)),
  postDeployFolder: fileURLToPath(new URL("../../migrations-post-deploy", import.meta.url)),
};
