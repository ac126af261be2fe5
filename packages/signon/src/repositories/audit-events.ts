import type { SignonDatabase } from "../db/database.js";
import { auditEvents } from "../db/schema.js";

export type AuditEvent = typeof auditEvents.$inferInsert;

export async function insertAuditEvent(db: SignonDatabase, event: AuditEvent): Promise<void> {
  await db.insert(auditEvents).values(event);
}
