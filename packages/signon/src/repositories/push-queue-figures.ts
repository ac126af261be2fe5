import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";

/** The push outbox at a glance, for the `/metrics` gauges. */
export interface PushQueueFigures {
  /** Rows waiting to be sent (the queue depth), including those waiting for a retry. */
  pending: number;
  /** Pending rows that have failed at least once and wait for their next attempt. */
  retrying: number;
  /** Rows whose latest push was given up on (refused, or out of attempts). */
  failed: number;
  /** Rows whose latest push arrived. */
  delivered: number;
  /** Seconds since the oldest pending row was queued; 0 when none is pending. */
  oldestPendingSeconds: number;
}

/**
 * Counts the outbox by status in one statement. The table holds one row per
 * (user, application, kind), so it stays small and the count is cheap; the
 * pending count uses the partial index of due rows.
 */
export async function readPushQueueFigures(db: SignonDatabase, now: Date): Promise<PushQueueFigures> {
  const result = await db.execute<{ pending: number; retrying: number; failed: number; delivered: number; oldest_pending_seconds: number }>(sql`
    select count(*) filter (where status = 'pending')::int as pending,
           count(*) filter (where status = 'pending' and attempts > 0)::int as retrying,
           count(*) filter (where status = 'failed')::int as failed,
           count(*) filter (where status = 'delivered')::int as delivered,
           coalesce(greatest(0, extract(epoch from ${now.toISOString()}::timestamptz - min(pending_since) filter (where status = 'pending'))), 0)::float8
             as oldest_pending_seconds
      from signon.push_deliveries`);
  const row = result.rows[0];
  return {
    pending: Number(row?.pending ?? 0),
    retrying: Number(row?.retrying ?? 0),
    failed: Number(row?.failed ?? 0),
    delivered: Number(row?.delivered ?? 0),
    oldestPendingSeconds: Number(row?.oldest_pending_seconds ?? 0),
  };
}
