import { and, asc, eq } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { applications, invitationPermissions } from "../db/schema.js";

/** A permission waiting for an invited person to accept their invitation. */
export interface PendingPermission {
  applicationId: string;
  applicationName: string;
  permission: string;
  invitedByUid: string | null;
}

/** Records the permissions to grant when the invitation of `userUid` is accepted. */
export async function insertInvitationPermissions(
  db: SignonDatabase,
  userUid: string,
  chosen: readonly { applicationId: string; permission: string }[],
  invitedByUid: string | null,
  now: Date,
): Promise<void> {
  if (chosen.length === 0) return;
  await db
    .insert(invitationPermissions)
    .values(chosen.map(({ applicationId, permission }) => ({ userUid, applicationId, permission, invitedByUid, createdAt: now })))
    .onConflictDoNothing();
}

/** The permissions waiting for `userUid` to accept their invitation, by application name and permission. */
export async function listInvitationPermissions(db: SignonDatabase, userUid: string): Promise<PendingPermission[]> {
  return db
    .select({
      applicationId: invitationPermissions.applicationId,
      applicationName: applications.name,
      permission: invitationPermissions.permission,
      invitedByUid: invitationPermissions.invitedByUid,
    })
    .from(invitationPermissions)
    .innerJoin(applications, eq(applications.id, invitationPermissions.applicationId))
    .where(eq(invitationPermissions.userUid, userUid))
    .orderBy(asc(applications.name), asc(invitationPermissions.permission));
}

/** Forgets the waiting permissions of `userUid` (once granted). */
export async function deleteInvitationPermissions(db: SignonDatabase, userUid: string): Promise<void> {
  await db.delete(invitationPermissions).where(and(eq(invitationPermissions.userUid, userUid)));
}
