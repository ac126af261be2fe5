import { audit } from "../audit.js";
import type { SignonContext } from "../context.js";
import { AccountError, requireUserByEmail } from "../accounts/manage-users.js";
import { findApplicationByName, type Application } from "../repositories/applications.js";
import { addPermissions, listPermissions, removePermissions } from "../repositories/permissions.js";

/** Finds an application by name or says plainly that there is none. */
export async function requireApplication(ctx: SignonContext, name: string): Promise<Application> {
  const application = await findApplicationByName(ctx.db, name);
  if (!application) throw new AccountError(`No application is named ${name}`);
  return application;
}

/**
 * Grants permissions on an application to a user. Each must be one the
 * application supports (S12). Returns the permissions held afterwards.
 */
export async function grantPermissions(
  ctx: SignonContext,
  change: { email: string; application: string; permissions: readonly string[] },
  actorUid: string | null = null,
): Promise<string[]> {
  const user = await requireUserByEmail(ctx, change.email);
  const application = await requireApplication(ctx, change.application);
  const unsupported = change.permissions.filter((permission) => !application.supportedPermissions.includes(permission));
  if (unsupported.length > 0) {
    throw new AccountError(`${application.name} does not support ${unsupported.join(", ")} (it supports ${application.supportedPermissions.join(", ")})`);
  }
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const added = await addPermissions(tx, user.uid, application.id, change.permissions, now);
    if (added.length > 0) {
      await audit(tx, { action: "permissions_granted", at: now, actorUid, subjectUid: user.uid, applicationId: application.id, details: { permissions: added } });
    }
    return listPermissions(tx, user.uid, application.id);
  });
}

/** Revokes permissions on an application from a user. Returns the permissions held afterwards. */
export async function revokePermissions(
  ctx: SignonContext,
  change: { email: string; application: string; permissions: readonly string[] },
  actorUid: string | null = null,
): Promise<string[]> {
  const user = await requireUserByEmail(ctx, change.email);
  const application = await requireApplication(ctx, change.application);
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const removed = await removePermissions(tx, user.uid, application.id, change.permissions);
    if (removed.length > 0) {
      await audit(tx, { action: "permissions_revoked", at: now, actorUid, subjectUid: user.uid, applicationId: application.id, details: { permissions: removed } });
    }
    return listPermissions(tx, user.uid, application.id);
  });
}

