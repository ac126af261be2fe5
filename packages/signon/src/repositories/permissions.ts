import { and, asc, eq, inArray } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { userPermissions } from "../db/schema.js";

/** The permission names a user holds on one application, sorted. */
export async function listPermissions(db: SignonDatabase, userUid: string, applicationId: string): Promise<string[]> {
  const rows = await db
    .select({ permission: userPermissions.permission })
    .from(userPermissions)
    .where(and(eq(userPermissions.userUid, userUid), eq(userPermissions.applicationId, applicationId)))
    .orderBy(asc(userPermissions.permission));
  return rows.map((row) => row.permission);
}

/** Adds permissions; ones the user already holds are left alone. Returns the ones added. */
export async function addPermissions(
  db: SignonDatabase,
  userUid: string,
  applicationId: string,
  permissions: readonly string[],
  now: Date,
): Promise<string[]> {
  if (permissions.length === 0) return [];
  const rows = await db
    .insert(userPermissions)
    .values(permissions.map((permission) => ({ userUid, applicationId, permission, createdAt: now })))
    .onConflictDoNothing()
    .returning({ permission: userPermissions.permission });
  return rows.map((row) => row.permission).sort();
}

/** Removes permissions. Returns the ones that were held. */
export async function removePermissions(
  db: SignonDatabase,
  userUid: string,
  applicationId: string,
  permissions: readonly string[],
): Promise<string[]> {
  if (permissions.length === 0) return [];
  const rows = await db
    .delete(userPermissions)
    .where(
      and(
        eq(userPermissions.userUid, userUid),
        eq(userPermissions.applicationId, applicationId),
        inArray(userPermissions.permission, [...permissions]),
      ),
    )
    .returning({ permission: userPermissions.permission });
  return rows.map((row) => row.permission).sort();
}
