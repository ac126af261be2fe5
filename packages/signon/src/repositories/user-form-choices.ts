import { asc, eq } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { applications, organisations, userPermissions } from "../db/schema.js";
import type { Application } from "./applications.js";
import type { Organisation } from "./organisations.js";

/** Every organisation, by name: the choices of the organisation fields and filters. */
export async function listOrganisationChoices(db: SignonDatabase): Promise<Organisation[]> {
  return db.select().from(organisations).orderBy(asc(organisations.name));
}

/** Applications that are not retired, by name: the rows of the permission grid and the permission filter. */
export async function listLiveApplications(db: SignonDatabase): Promise<Application[]> {
  return db.select().from(applications).where(eq(applications.retired, false)).orderBy(asc(applications.name));
}

/** Every permission a user holds, on any application. */
export async function listPermissionsOfUser(db: SignonDatabase, userUid: string): Promise<{ applicationId: string; permission: string }[]> {
  return db
    .select({ applicationId: userPermissions.applicationId, permission: userPermissions.permission })
    .from(userPermissions)
    .where(eq(userPermissions.userUid, userUid));
}
