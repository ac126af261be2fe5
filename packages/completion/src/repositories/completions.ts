import { and, eq, inArray, sql } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { blockCompletions } from "../db/schema.js";

/** Stores block completion values (insert or replace), stamped with `modified`. */
export async function upsertCompletions(
  q: Queryable,
  rows: readonly { learnerId: number; courseKey: string; blockKey: string; completion: number; modified: Date }[],
): Promise<void> {
  for (let at = 0; at < rows.length; at += 2000) {
    await q
      .insert(blockCompletions)
      .values(rows.slice(at, at + 2000).map((row) => ({ ...row })))
      .onConflictDoUpdate({
        target: [blockCompletions.courseKey, blockCompletions.learnerId, blockCompletions.blockKey],
        set: { completion: sql`excluded.completion`, modified: sql`excluded.modified` },
      });
  }
}

/** A learner's completion values in a course, by block key. */
export async function loadLearnerCompletions(q: Queryable, learnerId: number, courseKey: string): Promise<Map<string, number>> {
  const rows = await q
    .select({ blockKey: blockCompletions.blockKey, completion: blockCompletions.completion })
    .from(blockCompletions)
    .where(and(eq(blockCompletions.courseKey, courseKey), eq(blockCompletions.learnerId, learnerId)));
  return new Map(rows.map((row) => [row.blockKey, row.completion]));
}

/** Completion values of several learners in a course. */
export async function loadCompletionsOf(
  q: Queryable,
  learnerIds: readonly number[],
  courseKey: string,
): Promise<Map<number, Map<string, number>>> {
  const result = new Map<number, Map<string, number>>(learnerIds.map((id) => [id, new Map()]));
  if (learnerIds.length === 0) return result;
  const rows = await q
    .select({ learnerId: blockCompletions.learnerId, blockKey: blockCompletions.blockKey, completion: blockCompletions.completion })
    .from(blockCompletions)
    .where(and(eq(blockCompletions.courseKey, courseKey), inArray(blockCompletions.learnerId, [...learnerIds])));
  for (const row of rows) result.get(row.learnerId)?.set(row.blockKey, row.completion);
  return result;
}
