import { and, eq, inArray, sql } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { aggregates } from "../db/schema.js";

/** One stored aggregate. */
export interface AggregateRow {
  readonly blockKey: string;
  readonly aggregationName: string;
  readonly earned: number;
  readonly possible: number;
  readonly percent: number;
}

/** Inserts or replaces aggregates of one learner in one course. */
export async function upsertAggregates(
  q: Queryable,
  learnerId: number,
  courseKey: string,
  rows: readonly AggregateRow[],
  modified: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await q
    .insert(aggregates)
    .values(rows.map((row) => ({ ...row, learnerId, courseKey, modified })))
    .onConflictDoUpdate({
      target: [aggregates.courseKey, aggregates.learnerId, aggregates.blockKey],
      set: {
        aggregationName: sql`excluded.aggregation_name`,
        earned: sql`excluded.earned`,
        possible: sql`excluded.possible`,
        percent: sql`excluded.percent`,
        modified: sql`excluded.modified`,
      },
    });
}

/** Deletes every aggregate of one learner in one course. */
export async function deleteAggregates(q: Queryable, learnerId: number, courseKey: string): Promise<void> {
  await q.delete(aggregates).where(and(eq(aggregates.courseKey, courseKey), eq(aggregates.learnerId, learnerId)));
}

/** Stored aggregates of some learners for some blocks of a course, by learner. */
export async function loadAggregates(
  q: Queryable,
  courseKey: string,
  learnerIds: readonly number[],
  blockKeys: readonly string[],
): Promise<Map<number, Map<string, AggregateRow>>> {
  const result = new Map<number, Map<string, AggregateRow>>(learnerIds.map((id) => [id, new Map()]));
  if (learnerIds.length === 0 || blockKeys.length === 0) return result;
  const rows = await q
    .select({
      learnerId: aggregates.learnerId,
      blockKey: aggregates.blockKey,
      aggregationName: aggregates.aggregationName,
      earned: aggregates.earned,
      possible: aggregates.possible,
      percent: aggregates.percent,
    })
    .from(aggregates)
    .where(
      and(
        eq(aggregates.courseKey, courseKey),
        inArray(aggregates.learnerId, [...learnerIds]),
        inArray(aggregates.blockKey, [...blockKeys]),
      ),
    );
  for (const { learnerId, ...row } of rows) result.get(learnerId)?.set(row.blockKey, row);
  return result;
}

