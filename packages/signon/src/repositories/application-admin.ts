import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { applications, userPermissions } from "../db/schema.js";
import type { Application } from "./applications.js";

/** An application as the applications list shows it, with its pushes waiting or failed. */
export interface ApplicationSummary {
  id: string;
  name: string;
  clientId: string;
  homeUri: string | null;
  retired: boolean;
  pendingPushes: number;
  failedPushes: number;
}

/** Every application, by name, with how many of its pushes are pending and failed. */
export async function listApplicationSummaries(db: SignonDatabase): Promise<ApplicationSummary[]> {
  const result = await db.execute<{
    id: string; name: string; client_id: string; home_uri: string | null; retired: boolean; pending: number; failed: number;
  }>(sql`
    select a.id, a.name, a.client_id, a.home_uri, a.retired,
           count(d.id) filter (where d.status = 'pending')::int as pending,
           count(d.id) filter (where d.status = 'failed')::int as failed
      from signon.applications a
      left join signon.push_deliveries d on d.application_id = a.id and d.status in ('pending', 'failed')
     group by a.id
     order by lower(a.name), a.name`);
  return result.rows.map((row) => ({
    id: row.id,
    name: row.name,
    clientId: row.client_id,
    homeUri: row.home_uri,
    retired: row.retired,
    pendingPushes: row.pending,
    failedPushes: row.failed,
  }));
}

export async function findApplicationById(db: SignonDatabase, id: string): Promise<Application | null> {
  const [row] = await db.select().from(applications).where(eq(applications.id, id)).limit(1);
  return row ?? null;
}

/** Applications that are not retired, by name. */
export async function listLiveApplications(db: SignonDatabase): Promise<Application[]> {
  return db.select().from(applications).where(eq(applications.retired, false)).orderBy(asc(applications.name));
}

/** Changes the settings of an application; returns the row afterwards, or `null` when there is none. */
export async function updateApplicationRow(
  db: SignonDatabase,
  id: string,
  changes: Partial<
    Pick<
      Application,
      | "name"
      | "redirectUris"
      | "homeUri"
      | "pushBaseUrl"
      | "supportedPermissions"
      | "delegatablePermissions"
      | "requirePkce"
      | "clientSecretHash"
      | "retired"
      | "defaultPermissions"
      | "permissionsNotGrantableInUi"
      | "apiOnly"
      | "pushEnabled"
    >
  >,
): Promise<Application | null> {
  const [row] = await db.update(applications).set(changes).where(eq(applications.id, id)).returning();
  return row ?? null;
}

/** Removes these permissions of an application from everyone who holds them; returns what was removed, per user. */
export async function removePermissionsFromHolders(
  db: SignonDatabase,
  applicationId: string,
  permissions: readonly string[],
): Promise<Map<string, string[]>> {
  const removed = new Map<string, string[]>();
  if (permissions.length === 0) return removed;
  const rows = await db
    .delete(userPermissions)
    .where(and(eq(userPermissions.applicationId, applicationId), inArray(userPermissions.permission, [...permissions])))
    .returning({ userUid: userPermissions.userUid, permission: userPermissions.permission });
  for (const row of rows) removed.set(row.userUid, [...(removed.get(row.userUid) ?? []), row.permission].sort());
  return removed;
}
