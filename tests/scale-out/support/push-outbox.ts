import { loadConfig, openSignonDatabase } from "@tessera/signon";
// Sign-on's own domain and outbox functions, as its benchmark uses them: the fastest honest way to queue many pushes.
import { createUser } from "../../../packages/signon/src/accounts/manage-users.js";
import { statementRunner } from "../../../packages/signon/src/db/statements.js";
import { queuePushes } from "../../../packages/signon/src/repositories/push-deliveries.js";

/**
 * Creates `users` people holding `signin` on each application, then queues
 * one user-update push per (user, application) in Sign-on's outbox, as a
 * permission change does. Returns the users' uids.
 */
export async function queueUpdatePushes(env: Record<string, string>, plan: { users: number; applicationIds: readonly string[] }): Promise<string[]> {
  const config = loadConfig(env, "cli");
  const database = await openSignonDatabase(config);
  try {
    const ctx = { db: database.db, statements: statementRunner(database.pool, config.preparedStatements), config, now: () => new Date() };
    const uids: string[] = [];
    for (let n = 0; n < plan.users; n++) {
      uids.push((await createUser(ctx, { email: `push-${n}@example.org`, name: `Push ${n}` })).uid);
    }
    // Granted directly, so the grants themselves queue nothing: the pushes below are the only ones.
    await database.pool.query(
      "insert into signon.user_permissions (user_uid, application_id, permission, created_at) select u, a, 'signin', now() from unnest($1::uuid[]) u, unnest($2::uuid[]) a",
      [uids, plan.applicationIds],
    );
    const now = new Date();
    await database.db.transaction(async (tx) => {
      for (const uid of uids) await queuePushes(tx, { userUid: uid, kinds: ["update"], targets: { applicationIds: plan.applicationIds }, now });
    });
    return uids;
  } finally {
    await database.close();
  }
}
