import { and, asc, eq, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { applications, organisations, userPermissions } from "../db/schema.js";
import type { Application } from "./applications.js";
import type { Organisation } from "./organisations.js";

/** Every organisation, by name: the choices of the organisation fields and filters. */
export async function listOrganisationChoices(db: SignonDatabase): Promise<Organisation[]> {
  return db.select().from(organisations).orderBy(asc(organisations.name));
}

/** Applications that are neither retired nor API only, by name: the rows of people's permission grid and the permission filter. */
export async function listLiveApplications(db: SignonDatabase): Promise<Application[]> {
  return db
    .select()
    .from(applications)
    .where(and(eq(applications.retired, false), eq(applications.apiOnly, false)))
    .orderBy(asc(applications.name));
}

/** Every permission a user holds, on any application. */
export async function listPermissionsOfUser(db: SignonDatabase, userUid: string): Promise<{ applicationId: string; permission: string }[]> {
  return db
    .select({ applicationId: userPermissions.applicationId, permission: userPermissions.permission })
    .from(userPermissions)
    .where(eq(userPermissions.userUid, userUid));
}

/** The permissions of these users, by user uid and then application id, each list sorted. */
export async function permissionsOfUsers(db: SignonDatabase, userUids: readonly string[]): Promise<Map<string, Map<string, string[]>>> {
  const byUser = new Map<string, Map<string, string[]>>();
  if (userUids.length === 0) return byUser;
  const rows = await db
    .select({ userUid: userPermissions.userUid, applicationId: userPermissions.applicationId, permission: userPermissions.permission })
    .from(userPermissions)
    // One array parameter, however many people the export holds.
    .where(sql`${userPermissions.userUid} = any(${`{${userUids.join(",")}}`}::uuid[])`)
    .orderBy(asc(userPermissions.permission));
  for (const row of rows) {
    const byApplication = byUser.get(row.userUid) ?? new Map<string, string[]>();
    byApplication.set(row.applicationId, [...(byApplication.get(row.applicationId) ?? []), row.permission]);
    byUser.set(row.userUid, byApplication);
  }
  return byUser;
}
