import { and, eq, ne, sql } from "drizzle-orm";
import { audit } from "../audit.js";
import type { RequestOrigin } from "../context.js";
import type { SignonDatabase } from "../db/database.js";
import { applications } from "../db/schema.js";
import { addPermissions } from "../repositories/permissions.js";
import { queuePushes } from "../repositories/push-deliveries.js";

/**
 * Grants a new person the default permissions of every application that has
 * some (neither retired nor API only), inside the caller's transaction: each
 * grant audited as `permissions_granted` (`reason: "default"`) and pushed like
 * any other (S13). The caller wakes the delivery worker after the commit.
 * Returns how many applications gained a permission.
 */
export async function grantDefaultPermissions(
  tx: SignonDatabase,
  grant: { userUid: string; now: Date; actorUid: string | null; origin: RequestOrigin | null },
): Promise<number> {
  const withDefaults = await tx
    .select({ id: applications.id, defaults: applications.defaultPermissions })
    .from(applications)
    .where(and(eq(applications.retired, false), eq(applications.apiOnly, false), ne(applications.defaultPermissions, sql`'{}'::text[]`)));
  let granted = 0;
  for (const application of withDefaults) {
    const added = await addPermissions(tx, grant.userUid, application.id, application.defaults, grant.now);
    if (added.length === 0) continue;
    granted += 1;
    await audit(tx, {
      action: "permissions_granted",
      at: grant.now,
      actorUid: grant.actorUid,
      subjectUid: grant.userUid,
      applicationId: application.id,
      origin: grant.origin,
      details: { permissions: added, reason: "default" },
    });
    await queuePushes(tx, { userUid: grant.userUid, kinds: ["update"], targets: { applicationIds: [application.id] }, now: grant.now });
  }
  return granted;
}
