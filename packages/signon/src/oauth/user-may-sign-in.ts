import type { SignonDatabase } from "../db/database.js";
import { listPermissions } from "../repositories/permissions.js";
import type { User } from "../repositories/users.js";

/** Whether a user may use an application now: not suspended and holding its `signin` permission (S9). */
export async function userMaySignIn(db: SignonDatabase, user: User, applicationId: string): Promise<boolean> {
  if (user.suspendedAt !== null) return false;
  return (await listPermissions(db, user.uid, applicationId)).includes("signin");
}
