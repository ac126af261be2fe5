import { sql } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { staleCompletions } from "../db/schema.js";

/** How far aggregation lags behind, for the `/metrics` gauges. */
export interface StaleFigures {
  /** Unresolved stale records: (learner, course) aggregates waiting to be recomputed. */
  unresolved: number;
  /** Seconds since the oldest unresolved record was written; 0 when none is waiting. */
  oldestSeconds: number;
}

/** Counts the unresolved stale records in one statement (on the partial index of unresolved rows). */
export async function readStaleFigures(q: Queryable, now: Date): Promise<StaleFigures> {
  const result = await q.execute<{ unresolved: number; oldest_seconds: number }>(sql`
    select count(*)::int as unresolved,
           coalesce(greatest(0, extract(epoch from ${now.toISOString()}::timestamptz - min(${staleCompletions.created}))), 0)::float8 as oldest_seconds
      from ${staleCompletions}
     where ${staleCompletions.resolved} = false`);
  const row = result.rows[0];
  return { unresolved: Number(row?.unresolved ?? 0), oldestSeconds: Number(row?.oldest_seconds ?? 0) };
}
