import { and, eq, inArray, type SQL } from "drizzle-orm";
import type { AuditAction } from "../audit.js";
import type { SignonDatabase } from "../db/database.js";
import { auditEvents } from "../db/schema.js";
import { listEventRows, type EventPage, type UserEventRow } from "./user-events.js";

/**
 * The actions an application's event log shows: changes to the application
 * itself, not its users' sign-ins. The partial index
 * `audit_events_application_change_idx` holds exactly these.
 */
export const applicationChangeActions = [
  "application_created",
  "application_updated",
  "application_secret_rotated",
  "application_retired",
  "application_unretired",
  "application_uris_rewritten",
  "credentials_exported",
  "client_authentication_flood",
] as const satisfies readonly AuditAction[];

/**
 * The changes recorded for an application, newest first, a page at a time (keyset paging, as the users' event
 * logs: `listEventRows`).
 */
export async function listApplicationEvents(db: SignonDatabase, applicationId: string, page: EventPage): Promise<UserEventRow[]> {
  return listEventRows(db, and(eq(auditEvents.applicationId, applicationId), inArray(auditEvents.action, [...applicationChangeActions])) as SQL, page);
}
