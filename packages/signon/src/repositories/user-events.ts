import { and, desc, eq, or, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { SignonDatabase } from "../db/database.js";
import { applications, auditEvents, users } from "../db/schema.js";

/** An audit event with the names of the people and the application it involves. */
export interface UserEventRow {
  id: number;
  occurredAt: Date;
  action: string;
  actorUid: string | null;
  actorName: string | null;
  subjectUid: string | null;
  subjectName: string | null;
  applicationName: string | null;
  ip: string | null;
  /** The User-Agent header of the request that caused the event, as stored (at most 512 characters). */
  userAgent: string | null;
  details: Record<string, unknown>;
}

/** A page of an event log: `limit` events, or with `before` (an event id) the first `limit` older than that event. */
export interface EventPage {
  limit: number;
  before?: number | null | undefined;
}

/**
 * The events matching `which`, newest first, a page at a time (keyset paging on occurrence time and id, so a page
 * deep in a long log costs no more than the first; an id no event has gives an empty page), with the names of the
 * people and the application each involves. Every event log reads through this.
 */
export async function listEventRows(db: SignonDatabase, which: SQL, page: EventPage): Promise<UserEventRow[]> {
  const actor = alias(users, "actor");
  const subject = alias(users, "subject");
  return db
    .select({
      id: auditEvents.id,
      occurredAt: auditEvents.occurredAt,
      action: auditEvents.action,
      actorUid: auditEvents.actorUid,
      actorName: actor.name,
      subjectUid: auditEvents.subjectUid,
      subjectName: subject.name,
      applicationName: applications.name,
      ip: auditEvents.ip,
      userAgent: auditEvents.userAgent,
      details: auditEvents.details,
    })
    .from(auditEvents)
    .leftJoin(actor, eq(actor.uid, auditEvents.actorUid))
    .leftJoin(subject, eq(subject.uid, auditEvents.subjectUid))
    .leftJoin(applications, eq(applications.id, auditEvents.applicationId))
    .where(
      and(
        which,
        page.before === undefined || page.before === null
          ? undefined
          : sql`(${auditEvents.occurredAt}, ${auditEvents.id}) < (select e.occurred_at, e.id from signon.audit_events e where e.id = ${page.before})`,
      ),
    )
    .orderBy(desc(auditEvents.occurredAt), desc(auditEvents.id))
    .limit(page.limit);
}

/** Audit events where the user is the subject or the actor, newest first, a page at a time (`listEventRows`). */
export async function listEventsOfUser(db: SignonDatabase, userUid: string, page: EventPage): Promise<UserEventRow[]> {
  return listEventRows(db, or(eq(auditEvents.subjectUid, userUid), eq(auditEvents.actorUid, userUid)) as SQL, page);
}
