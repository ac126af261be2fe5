import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import type { PushKind, PushStatus } from "./push-deliveries.js";

/** A push to one application, as its delivery status page shows it (S14). */
export interface ApplicationPush {
  id: number;
  email: string;
  kind: PushKind;
  status: PushStatus;
  attempts: number;
  lastError: string | null;
  /** When a pending push is tried next; `null` once delivered or failed. */
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  deliveredAt: Date | null;
}

type Row = {
  id: string | number; email: string; kind: PushKind; status: PushStatus; attempts: number; last_error: string | null;
  next_attempt_at: Date | string; last_attempt_at: Date | string | null; delivered_at: Date | string | null;
};

const at = (value: Date | string | null) => (value === null ? null : new Date(value));

function toPush(row: Row): ApplicationPush {
  return {
    id: Number(row.id),
    email: row.email,
    kind: row.kind,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    nextAttemptAt: row.status === "pending" ? at(row.next_attempt_at) : null,
    lastAttemptAt: at(row.last_attempt_at),
    deliveredAt: at(row.delivered_at),
  };
}

/** The pushes of an application: failed first, then pending, then delivered; newest first within each. */
export async function listPushesOfApplication(db: SignonDatabase, applicationId: string, limit = 200): Promise<ApplicationPush[]> {
  const result = await db.execute<Row>(sql`
    select d.id, u.email, d.kind, d.status, d.attempts, d.last_error, d.next_attempt_at, d.last_attempt_at, d.delivered_at
      from signon.push_deliveries d
      join signon.users u on u.uid = d.user_uid
     where d.application_id = ${applicationId}::uuid
     order by case d.status when 'failed' then 0 when 'pending' then 1 else 2 end, d.updated_at desc, d.id desc
     limit ${limit}`);
  return result.rows.map(toPush);
}

/** One push of an application with its user's uid, or `null` when the application has no push with that id. */
export async function findPushOfApplication(
  db: SignonDatabase,
  applicationId: string,
  id: number,
): Promise<(ApplicationPush & { userUid: string }) | null> {
  const result = await db.execute<Row & { user_uid: string }>(sql`
    select d.id, d.user_uid, u.email, d.kind, d.status, d.attempts, d.last_error, d.next_attempt_at, d.last_attempt_at, d.delivered_at
      from signon.push_deliveries d
      join signon.users u on u.uid = d.user_uid
     where d.application_id = ${applicationId}::uuid and d.id = ${id}`);
  const row = result.rows[0];
  return row ? { ...toPush(row), userUid: row.user_uid } : null;
}

/**
 * Locks a failed push of an application for the caller's transaction and
 * returns it with its user's uid; `null` when the application has no failed
 * push with that id (unknown, another application's, pending or delivered).
 */
export async function lockFailedPushOfApplication(
  db: SignonDatabase,
  applicationId: string,
  id: number,
): Promise<{ userUid: string; kind: PushKind; attempts: number } | null> {
  const result = await db.execute<{ user_uid: string; kind: PushKind; attempts: number }>(sql`
    select d.user_uid, d.kind, d.attempts from signon.push_deliveries d
     where d.application_id = ${applicationId}::uuid and d.id = ${id} and d.status = 'failed'
       for update`);
  const row = result.rows[0];
  return row ? { userUid: row.user_uid, kind: row.kind, attempts: row.attempts } : null;
}
