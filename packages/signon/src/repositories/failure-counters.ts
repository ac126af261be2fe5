import { and, gt, inArray, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { failureCounters } from "../db/schema.js";

/** The failures counted under a key in its current window. */
export interface FailureCount {
  failures: number;
  windowEndsAt: Date;
}

/**
 * Counts one failure under `key` in a fixed window of `windowSeconds` that
 * starts at the first failure; an expired window starts again at 1. One
 * statement, so concurrent failures on several instances all count.
 */
export async function countFailure(db: SignonDatabase, key: string, windowSeconds: number, now: Date): Promise<FailureCount> {
  const windowEndsAt = new Date(now.getTime() + windowSeconds * 1000);
  const expired = sql`${failureCounters.windowEndsAt} <= ${now.toISOString()}::timestamptz`;
  const [row] = await db
    .insert(failureCounters)
    .values({ key, failures: 1, windowEndsAt })
    .onConflictDoUpdate({
      target: failureCounters.key,
      set: {
        failures: sql`case when ${expired} then 1 else ${failureCounters.failures} + 1 end`,
        windowEndsAt: sql`case when ${expired} then excluded.window_ends_at else ${failureCounters.windowEndsAt} end`,
      },
    })
    .returning({ failures: failureCounters.failures, windowEndsAt: failureCounters.windowEndsAt });
  if (!row) throw new Error("upsert returned no row");
  return row;
}

/** The counts under `keys` whose window is still open at `now`, in one query. */
export async function readFailures(db: SignonDatabase, keys: readonly string[], now: Date): Promise<FailureCount[]> {
  if (keys.length === 0) return [];
  return db
    .select({ failures: failureCounters.failures, windowEndsAt: failureCounters.windowEndsAt })
    .from(failureCounters)
    .where(and(inArray(failureCounters.key, [...keys]), gt(failureCounters.windowEndsAt, now)));
}
