import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { auditEvents } from "../db/schema.js";

export type AuditEvent = typeof auditEvents.$inferInsert;

export async function insertAuditEvent(db: SignonDatabase, event: AuditEvent): Promise<void> {
  await db.insert(auditEvents).values(event);
}

/**
 * Deletes up to `batchSize` audit events that occurred before `cutoff`,
 * oldest first, in one short statement, and returns how many. Callers repeat
 * it until fewer come back, so a large backlog never holds a long lock.
 */
export async function deleteAuditEventsBefore(db: SignonDatabase, cutoff: Date, batchSize: number): Promise<number> {
  const result = await db.execute(sql`
    delete from signon.audit_events
     where id in (select id from signon.audit_events
                   where occurred_at < ${cutoff.toISOString()}::timestamptz
                   order by occurred_at
                   limit ${batchSize})`);
  return result.rowCount ?? 0;
}
