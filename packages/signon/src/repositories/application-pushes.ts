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

/** The list's order of statuses, as the expression of the index push_deliveries_application_list_idx. */
const statusRank = (alias: string) => sql.raw(`(case ${alias}.status when 'failed' then 0 when 'pending' then 1 else 2 end)`);

/**
 * A page of the pushes of an application: failed first, then pending, then
 * delivered; newest (last change) first within each. Keyset: `after` is the
 * id of the last push of the page before, and the page goes on from its
 * place (status, then time and id); through the index
 * push_deliveries_application_list_idx, two ranges of it at most.
 */
export async function listPushesOfApplication(db: SignonDatabase, applicationId: string, limit = 200, after: number | null = null): Promise<ApplicationPush[]> {
  const columns = sql`d.id, u.email, d.kind, d.status, d.attempts, d.last_error, d.next_attempt_at, d.last_attempt_at, d.delivered_at, d.updated_at, ${statusRank("d")} as rank`;
  const from = sql`from signon.push_deliveries d join signon.users u on u.uid = d.user_uid where d.application_id = ${applicationId}::uuid`;
  const result =
    after === null
      ? await db.execute<Row>(sql`select ${columns} ${from} order by ${statusRank("d")}, d.updated_at desc, d.id desc limit ${limit}`)
      : await db.execute<Row>(sql`
          with place as (select ${statusRank("c")} as rank, c.updated_at, c.id from signon.push_deliveries c where c.id = ${after} and c.application_id = ${applicationId}::uuid)
          select * from (
            (select ${columns} ${from} and ${statusRank("d")} = (select rank from place) and (d.updated_at, d.id) < (select updated_at, id from place)
              order by d.updated_at desc, d.id desc limit ${limit})
            union all
            (select ${columns} ${from} and ${statusRank("d")} > (select rank from place)
              order by ${statusRank("d")}, d.updated_at desc, d.id desc limit ${limit})
          ) as page
          order by rank, updated_at desc, id desc limit ${limit}`);
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
