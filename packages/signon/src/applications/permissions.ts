import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { AccountError, requireUserByEmail } from "../accounts/manage-users.js";
import { findApplicationByName, type Application } from "../repositories/applications.js";
import { addPermissions, listPermissions, removePermissions } from "../repositories/permissions.js";
import { queuePushes } from "../repositories/push-deliveries.js";
import { pushesCommitted } from "../pushes/queue.js";

/** Finds an application by name or says plainly that there is none. */
export async function requireApplication(ctx: SignonContext, name: string): Promise<Application> {
  const application = await findApplicationByName(ctx.db, name);
  if (!application) throw new AccountError(`No application is named ${name}`);
  return application;
}

/**
 * Grants permissions on an application to a user. Each must be one the
 * application supports (S12). Queues a PUT to the application (S13). Returns
 * the permissions held afterwards. `origin`: where the request came from, for
 * the audit event (none from the command line). Pass a transaction as
 * `ctx.db` to make the grant part of a larger change.
 */
export async function grantPermissions(
  ctx: SignonContext,
  change: { email: string; application: string; permissions: readonly string[] },
  actorUid: string | null = null,
  origin: RequestOrigin | null = null,
): Promise<string[]> {
  const user = await requireUserByEmail(ctx, change.email);
  const application = await requireApplication(ctx, change.application);
  const unsupported = change.permissions.filter((permission) => !application.supportedPermissions.includes(permission));
  if (unsupported.length > 0) {
    throw new AccountError(`${application.name} does not support ${unsupported.join(", ")} (it supports ${application.supportedPermissions.join(", ")})`);
  }
  const now = ctx.now();
  const held = await ctx.db.transaction(async (tx) => {
    const added = await addPermissions(tx, user.uid, application.id, change.permissions, now);
    if (added.length > 0) {
      await audit(tx, { action: "permissions_granted", at: now, actorUid, subjectUid: user.uid, applicationId: application.id, origin, details: { permissions: added } });
      await queuePushes(tx, { userUid: user.uid, kinds: ["update"], targets: { applicationIds: [application.id] }, now });
    }
    return listPermissions(tx, user.uid, application.id);
  });
  pushesCommitted(ctx);
  return held;
}

/**
 * Revokes permissions on an application from a user and queues a PUT to the
 * application, then a reauth when `signin` went (S13). Returns the permissions
 * held afterwards. `origin` is recorded in the audit event; `auditAction`
 * names it (`application_access_given_up` when people remove their own access).
 */
export async function revokePermissions(
  ctx: SignonContext,
  change: { email: string; application: string; permissions: readonly string[] },
  actorUid: string | null = null,
  origin: RequestOrigin | null = null,
  auditAction: "permissions_revoked" | "application_access_given_up" = "permissions_revoked",
): Promise<string[]> {
  const user = await requireUserByEmail(ctx, change.email);
  const application = await requireApplication(ctx, change.application);
  const now = ctx.now();
  const held = await ctx.db.transaction(async (tx) => {
    const removed = await removePermissions(tx, user.uid, application.id, change.permissions);
    if (removed.length > 0) {
      await audit(tx, { action: auditAction, at: now, actorUid, subjectUid: user.uid, applicationId: application.id, origin, details: { permissions: removed } });
      // S13: losing signin also ends the user's session there.
      const kinds = removed.includes("signin") ? (["update", "reauth"] as const) : (["update"] as const);
      await queuePushes(tx, { userUid: user.uid, kinds, targets: { applicationIds: [application.id] }, now });
    }
    return listPermissions(tx, user.uid, application.id);
  });
  pushesCommitted(ctx);
  return held;
}

