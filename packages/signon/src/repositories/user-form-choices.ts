import { and, asc, eq, type SQL } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { applications, organisations, userPermissions } from "../db/schema.js";
import type { Application } from "./applications.js";
import type { Organisation } from "./organisations.js";

/** Every organisation, by name: the choices of the organisation fields and filters. */
export async function listOrganisationChoices(db: SignonDatabase): Promise<Organisation[]> {
  return db.select().from(organisations).orderBy(asc(organisations.name));
}

/** The SQL form of `isForPeople` (accounts/offered-permissions.ts): applications that are neither retired nor API only. */
export function applicationIsForPeople(): SQL {
  return and(eq(applications.retired, false), eq(applications.apiOnly, false)) as SQL;
}

/** Applications that are neither retired nor API only, by name: the rows of people's permission grid and the permission filter. */
export async function listLiveApplications(db: SignonDatabase): Promise<Application[]> {
  return db.select().from(applications).where(applicationIsForPeople()).orderBy(asc(applications.name));
}

/** Every permission a user holds, on any application. */
export async function listPermissionsOfUser(db: SignonDatabase, userUid: string): Promise<{ applicationId: string; permission: string }[]> {
  return db
    .select({ applicationId: userPermissions.applicationId, permission: userPermissions.permission })
    .from(userPermissions)
    .where(eq(userPermissions.userUid, userUid));
}
