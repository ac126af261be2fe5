import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { findApplicationById, removePermissionsFromHolders, updateApplicationRow } from "../repositories/application-admin.js";
import type { Application } from "../repositories/applications.js";
import { queuePushes } from "../repositories/push-deliveries.js";
import { pushesCommitted } from "../pushes/queue.js";
import type { ApplicationSettings } from "./application-fields.js";

/** What an edit changed: the application afterwards and how many users lost a permission it no longer supports. */
export interface ApplicationUpdate {
  application: Application;
  changed: string[];
  usersWhoLostPermissions: number;
}

/**
 * Changes an application's redirect URIs, home URI, push base URL, PKCE rule
 * and supported and delegatable permissions, in one transaction. A supported
 * permission that is dropped is revoked from everyone who holds it, each
 * revocation audited and pushed to the application like any other (S13).
 * `signin` is always supported, so no user loses it here. Returns `null` when
 * there is no such application.
 */
export async function updateApplication(
  ctx: SignonContext,
  id: string,
  settings: Omit<ApplicationSettings, "name">,
  actor: { uid: string; origin: RequestOrigin },
): Promise<ApplicationUpdate | null> {
  const current = await findApplicationById(ctx.db, id);
  if (!current) return null;
  const next = {
    redirectUris: settings.redirectUris,
    homeUri: settings.homeUri,
    pushBaseUrl: settings.pushBaseUrl,
    supportedPermissions: settings.supportedPermissions,
    delegatablePermissions: settings.delegatablePermissions,
    requirePkce: settings.requirePkce,
  };
  const changed = (Object.keys(next) as (keyof typeof next)[]).filter((key) => JSON.stringify(next[key]) !== JSON.stringify(current[key])).sort();
  if (changed.length === 0) return { application: current, changed, usersWhoLostPermissions: 0 };
  const dropped = current.supportedPermissions.filter((permission) => !settings.supportedPermissions.includes(permission));
  const now = ctx.now();
  const result = await ctx.db.transaction(async (tx) => {
    const application = await updateApplicationRow(tx, id, next);
    if (!application) return null;
    const removed = await removePermissionsFromHolders(tx, id, dropped);
    for (const [userUid, permissions] of removed) {
      await audit(tx, { action: "permissions_revoked", at: now, actorUid: actor.uid, subjectUid: userUid, applicationId: id, origin: actor.origin, details: { permissions, reason: "no longer supported" } });
      await queuePushes(tx, { userUid, kinds: ["update"], targets: { applicationIds: [id] }, now });
    }
    await audit(tx, {
      action: "application_updated",
      at: now,
      actorUid: actor.uid,
      applicationId: id,
      origin: actor.origin,
      details: { changed, ...(dropped.length > 0 ? { permissions_removed: dropped } : {}) },
    });
    return { application, changed, usersWhoLostPermissions: removed.size };
  });
  if (result && result.usersWhoLostPermissions > 0) pushesCommitted(ctx);
  return result;
}
