import type pg from "pg";
import type { Logger } from "./logger.js";
import { runMigrations, type MigrationSet } from "./migrations.js";
import { pendingMigrations } from "./pending-migrations.js";
import { describeRestorePoint, restorePointName, setRestorePoint, type RestorePointOutcome } from "./restore-point.js";

/** What a service's `migrate` command did. */
export interface MigrateOutcome {
  /** Migrations of the first kind applied now. */
  applied: number;
  /** Post-deploy migrations applied now (only with `postDeploy`). */
  postDeployApplied: number;
  /** Post-deploy migrations that still wait, by tag. */
  postDeployPending: string[];
  /** Migrations applied earlier whose file has changed since. */
  changedSinceApplied: string[];
  /** The restore point set before the first migration was applied; null when none was due. */
  restorePoint: RestorePointOutcome | null;
}

/**
 * What `signon migrate` and `completion migrate` do: apply the migrations of
 * the first kind and, with `postDeploy`, then the post-deploy ones; say what
 * waits. The first kind is what a new instance applies when it starts, and
 * the release before can run against it: run it before replacing instances.
 * The second kind only once no instance of the release before remains.
 */
export async function migrateDatabase(
  pool: pg.Pool,
  sets: readonly MigrationSet[],
  options: { postDeploy: boolean; lockTimeoutMs?: number; lockAttempts?: number; log?: Logger; restorePointPrefix?: string },
): Promise<MigrateOutcome> {
  const runOptions = {
    ...(options.lockTimeoutMs === undefined ? {} : { lockTimeoutMs: options.lockTimeoutMs }),
    ...(options.lockAttempts === undefined ? {} : { lockAttempts: options.lockAttempts }),
    ...(options.log === undefined ? {} : { log: options.log }),
  };
  const runQuery = async (text: string) => (await pool.query<Record<string, unknown>>(text)).rows;
  // A migration is risky work: the cluster can be restored to just before it.
  const due = [...(await pendingMigrations(runQuery, sets)), ...(options.postDeploy ? await pendingMigrations(runQuery, sets, "post-deploy") : [])];
  const restorePoint = due.length === 0 ? null : await setRestorePoint(pool, restorePointName(options.restorePointPrefix ?? "migrate", new Date()));
  if (restorePoint !== null) options.log?.info(describeRestorePoint(restorePoint));
  const regular = await runMigrations(pool, sets, runOptions);
  const post = options.postDeploy ? await runMigrations(pool, sets, { ...runOptions, kind: "post-deploy" }) : [];
  return {
    restorePoint,
    applied: regular.reduce((sum, report) => sum + report.applied, 0),
    postDeployApplied: post.reduce((sum, report) => sum + report.applied, 0),
    postDeployPending: await pendingMigrations(runQuery, sets, "post-deploy"),
    changedSinceApplied: [...regular, ...post].flatMap((report) => report.changedSinceApplied),
  };
}

/** The lines a `migrate` command prints for `outcome` (`command`: how to call it, e.g. `signon migrate`). */
export function describeMigrateOutcome(outcome: MigrateOutcome, command: string, postDeploy: boolean): string[] {
  const lines = [`Applied ${outcome.applied} migration(s)${postDeploy ? ` and ${outcome.postDeployApplied} post-deploy migration(s)` : ""}.`];
  if (outcome.postDeployPending.length > 0) {
    lines.push(
      `${outcome.postDeployPending.length} post-deploy migration(s) wait: ${outcome.postDeployPending.join(", ")}. ` +
        `Run \`${command} --post-deploy\` once no instance of the previous release remains.`,
    );
  }
  for (const tag of outcome.changedSinceApplied) lines.push(`Migration ${tag} has changed since it was applied; this database does not have the change.`);
  return lines;
}
