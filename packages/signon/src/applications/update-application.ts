import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { findApplicationById, removePermissionsFromHolders, updateApplicationRow } from "../repositories/application-admin.js";
import { findApplicationByName, type Application } from "../repositories/applications.js";
import { isUniqueViolation } from "../repositories/unique-violation.js";
import { queuePushes } from "../repositories/push-deliveries.js";
import { pushesCommitted } from "../pushes/queue.js";
import type { ApplicationSettings } from "./application-fields.js";

/** What an edit changed: the application afterwards and how many users lost a permission it no longer supports. */
export interface ApplicationUpdate {
  application: Application;
  changed: string[];
  usersWhoLostPermissions: number;
}

/** A refused edit: another application has this name. */
export class ApplicationNameTaken extends Error {}

/**
 * Changes an application's name, redirect URIs, home URI, push base URL, PKCE
 * rule, supported, delegatable, default and web-grantable permissions, and its
 * API-only and push switches, in one transaction. A supported
 * permission that is dropped is revoked from everyone who holds it, each
 * revocation audited and pushed to the application like any other (S13).
 * `signin` is always supported, so no user loses it here. Returns `null` when
 * there is no such application.
 */
export async function updateApplication(
  ctx: SignonContext,
  id: string,
  settings: ApplicationSettings,
  actor: { uid: string | null; origin: RequestOrigin | null },
): Promise<ApplicationUpdate | null> {
  const current = await findApplicationById(ctx.db, id);
  if (!current) return null;
  const next = {
    name: settings.name,
    redirectUris: settings.redirectUris,
    homeUri: settings.homeUri,
    pushBaseUrl: settings.pushBaseUrl,
    supportedPermissions: settings.supportedPermissions,
    delegatablePermissions: settings.delegatablePermissions,
    requirePkce: settings.requirePkce,
    defaultPermissions: settings.defaultPermissions,
    permissionsNotGrantableInUi: settings.permissionsNotGrantableInUi,
    apiOnly: settings.apiOnly,
    pushEnabled: settings.pushEnabled,
  };
  const changed = (Object.keys(next) as (keyof typeof next)[]).filter((key) => JSON.stringify(next[key]) !== JSON.stringify(current[key])).sort();
  if (changed.length === 0) return { application: current, changed, usersWhoLostPermissions: 0 };
  const dropped = current.supportedPermissions.filter((permission) => !settings.supportedPermissions.includes(permission));
  if (next.name !== current.name) {
    const holder = await findApplicationByName(ctx.db, next.name);
    if (holder && holder.id !== id) throw new ApplicationNameTaken(`An application named ${next.name} already exists`);
  }
  const now = ctx.now();
  const result = await ctx.db.transaction(async (tx) => {
    const application = await updateApplicationRow(tx, id, next).catch((error: unknown) => {
      // Two people may pick the same name at once: the unique index settles it.
      if (isUniqueViolation(error)) throw new ApplicationNameTaken(`An application named ${next.name} already exists`);
      throw error;
    });
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
      details: {
        changed,
        ...(next.name !== current.name ? { name_before: current.name, name: next.name } : {}),
        ...(dropped.length > 0 ? { permissions_removed: dropped } : {}),
      },
    });
    return { application, changed, usersWhoLostPermissions: removed.size };
  });
  if (result && result.usersWhoLostPermissions > 0) pushesCommitted(ctx);
  return result;
}
