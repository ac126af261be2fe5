import { revokePermissions } from "../applications/permissions.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { listPermissionsOfUser } from "../repositories/account-overview.js";
import type { User } from "../repositories/users.js";

/** An application a person holds permissions on, as the give-up-access pages name it. */
export interface HeldApplication {
  id: string;
  name: string;
  permissions: string[];
}

/** The application `applicationId` with the permissions the person holds there, or `null` when they hold none. */
export async function heldApplication(ctx: SignonContext, user: Pick<User, "uid">, applicationId: string): Promise<HeldApplication | null> {
  const rows = (await listPermissionsOfUser(ctx.db, user.uid)).filter((row) => row.applicationId === applicationId);
  const first = rows[0];
  return first ? { id: first.applicationId, name: first.applicationName, permissions: rows.map((row) => row.permission) } : null;
}

/**
 * A person gives up their own access to an application: every permission
 * they hold there (`signin` and the others) is revoked, audited as
 * `application_access_given_up` with the person as actor, and the
 * application is told like any change (S13: a PUT, and a reauth as `signin`
 * went). Returns what was given up, or `null` when they held nothing there.
 */
export async function giveUpAccess(ctx: SignonContext, user: Pick<User, "uid" | "email">, applicationId: string, origin: RequestOrigin): Promise<HeldApplication | null> {
  const held = await heldApplication(ctx, user, applicationId);
  if (!held) return null;
  await revokePermissions(ctx, { email: user.email, application: held.name, permissions: held.permissions }, user.uid, origin, "application_access_given_up");
  return held;
}
