import { parseArgs } from "node:util";
import { describeMigrateOutcome, migrateDatabase } from "@tessera/db";
import { TESSERA_VERSION } from "@tessera/service-kit";
import { loadConfig } from "../config.js";
import { openSignonDatabase } from "../database.js";
import { signonMigrations } from "../db/migrations.js";
import type { CliIo } from "./output.js";

export const MIGRATE_USAGE = "signon migrate [--post-deploy] [--json]";

/**
 * `signon migrate`: applies Sign-on's migrations of the first kind (what a
 * new instance applies at its start; the release before can run against
 * them); with `--post-deploy`, then the post-deploy ones, which must wait
 * until no instance of the release before remains. Says what still waits.
 */
export async function runMigrateCommand(argv: readonly string[], io: CliIo): Promise<number> {
  let values: { "post-deploy"?: boolean; json?: boolean };
  try {
    values = parseArgs({ args: [...argv], options: { "post-deploy": { type: "boolean" }, json: { type: "boolean" } }, strict: true }).values;
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\nUsage: ${MIGRATE_USAGE}\n`);
    return 2;
  }
  const postDeploy = values["post-deploy"] === true;
  const config = loadConfig(io.env, "cli");
  const log = { info: (line: string) => io.stderr.write(`${line}\n`), warn: (line: string) => io.stderr.write(`${line}\n`) };
  const database = await openSignonDatabase(config, log, { migrate: false });
  try {
    const outcome = await migrateDatabase(database.pool, [signonMigrations], {
      postDeploy,
      lockTimeoutMs: config.databaseMigrationLockTimeoutMs,
      lockAttempts: config.databaseMigrationLockAttempts,
      log,
      restorePointPrefix: "signon-migrate",
    });
    if (values.json === true) {
      io.stdout.write(
        `${JSON.stringify({
          version: TESSERA_VERSION,
          applied: outcome.applied,
          post_deploy_applied: outcome.postDeployApplied,
          post_deploy_pending: outcome.postDeployPending,
          changed_since_applied: outcome.changedSinceApplied,
          restore_point: outcome.restorePoint,
        })}\n`,
      );
    } else {
      io.stdout.write(`${describeMigrateOutcome(outcome, "signon migrate", postDeploy).map((line) => `signon ${TESSERA_VERSION}: ${line}`).join("\n")}\n`);
    }
    return 0;
  } finally {
    await database.close();
  }
}
