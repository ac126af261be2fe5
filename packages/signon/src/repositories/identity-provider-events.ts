import { and, inArray, sql, type SQL } from "drizzle-orm";
import type { AuditAction } from "../audit.js";
import type { SignonDatabase } from "../db/database.js";
import { auditEvents } from "../db/schema.js";
import { listEventRows, type EventPage, type UserEventRow } from "./user-events.js";

/**
 * The actions an organisation's identity provider page lists: changes to the connection, sign-ins through it that
 * were refused, and its logouts. The partial index `audit_events_identity_provider_idx` holds exactly these.
 */
export const identityProviderEventActions = [
  "identity_provider_connected",
  "identity_provider_changed",
  "identity_provider_disconnected",
  "upstream_sign_in_refused",
  "upstream_logout",
] as const satisfies readonly AuditAction[];

/** The events of an organisation's provider, newest first, a page at a time. */
export async function listIdentityProviderEvents(db: SignonDatabase, organisationId: string, page: EventPage): Promise<UserEventRow[]> {
  return listEventRows(
    db,
    and(sql`(${auditEvents.details}->>'organisation_id') = ${organisationId}`, inArray(auditEvents.action, [...identityProviderEventActions])) as SQL,
    page,
  );
}
