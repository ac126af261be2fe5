import { and, asc, eq } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { applications, organisations, userPermissions } from "../db/schema.js";

/** An organisation's id and name, or `null` when there is none with that id. */
export async function findOrganisationSummary(db: SignonDatabase, id: string): Promise<{ id: string; name: string; slug: string; closed: boolean } | null> {
  const [row] = await db
    .select({ id: organisations.id, name: organisations.name, slug: organisations.slug, closed: organisations.closed })
    .from(organisations)
    .where(eq(organisations.id, id))
    .limit(1);
  return row ?? null;
}

/** Every permission a user holds, with its application, ordered by application name then permission. */
export async function listPermissionsOfUser(
  db: SignonDatabase,
  userUid: string,
): Promise<{ applicationId: string; applicationName: string; homeUri: string | null; retired: boolean; permission: string }[]> {
  return db
    .select({
      applicationId: applications.id,
      applicationName: applications.name,
      homeUri: applications.homeUri,
      retired: applications.retired,
      permission: userPermissions.permission,
    })
    .from(userPermissions)
    .innerJoin(applications, eq(applications.id, userPermissions.applicationId))
    .where(eq(userPermissions.userUid, userUid))
    .orderBy(asc(applications.name), asc(userPermissions.permission));
}

/** The applications a user may sign in to: they hold `signin` and the application is neither retired nor API only. */
export async function listSignInApplications(db: SignonDatabase, userUid: string): Promise<{ id: string; name: string; homeUri: string | null }[]> {
  return db
    .select({ id: applications.id, name: applications.name, homeUri: applications.homeUri })
    .from(userPermissions)
    .innerJoin(applications, eq(applications.id, userPermissions.applicationId))
    .where(and(eq(userPermissions.userUid, userUid), eq(userPermissions.permission, "signin"), eq(applications.retired, false), eq(applications.apiOnly, false)))
    .orderBy(asc(applications.name));
}
