import { and, eq, inArray, sql } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { enrollments, learners, staleCompletions } from "../db/schema.js";

/** An unresolved stale record. */
export interface StaleRow {
  readonly id: number;
  readonly username: string;
  readonly courseKey: string;
  readonly blockKey: string | null;
  readonly force: boolean;
}

const columns = {
  id: staleCompletions.id,
  username: staleCompletions.username,
  courseKey: staleCompletions.courseKey,
  blockKey: staleCompletions.blockKey,
  force: staleCompletions.force,
};

/** Unresolved stale records of one learner in one course. */
export async function findUnresolvedStale(q: Queryable, username: string, courseKey: string): Promise<StaleRow[]> {
  return q
    .select(columns)
    .from(staleCompletions)
    .where(and(eq(staleCompletions.username, username), eq(staleCompletions.courseKey, courseKey), eq(staleCompletions.resolved, false)));
}

/** Marks every unresolved record of (username, course) resolved. */
export async function resolveStale(q: Queryable, username: string, courseKey: string): Promise<void> {
  await q
    .update(staleCompletions)
    .set({ resolved: true, modified: new Date() })
    .where(and(eq(staleCompletions.username, username), eq(staleCompletions.courseKey, courseKey), eq(staleCompletions.resolved, false)));
}

/** Records that every enrolled learner of a course needs recomputing (its structure changed). */
export async function markCourseStale(q: Queryable, courseKey: string, force: boolean): Promise<number> {
  const rows = await q
    .insert(staleCompletions)
    .select(
      q
        .select({
          username: learners.username,
          courseKey: enrollments.courseKey,
          blockKey: sql<string | null>`null`.as("block_key"),
          force: sql<boolean>`${force}::boolean`.as("force"),
          resolved: sql<boolean>`false`.as("resolved"),
          created: sql<Date>`now()`.as("created"),
          modified: sql<Date>`now()`.as("modified"),
        })
        .from(enrollments)
        .innerJoin(learners, eq(learners.id, enrollments.learnerId))
        .where(eq(enrollments.courseKey, courseKey)),
    )
    .returning({ id: staleCompletions.id });
  return rows.length;
}

/**
 * Takes up to `limit` (username, course) pairs with unresolved records, locking
 * them so that concurrent workers take different ones.
 */
export async function claimStale(q: Queryable, limit: number): Promise<StaleRow[]> {
  const rows = await q
    .select(columns)
    .from(staleCompletions)
    .where(eq(staleCompletions.resolved, false))
    .orderBy(staleCompletions.id)
    .limit(limit)
    .for("update", { skipLocked: true });
  return rows;
}

/** Marks records resolved by id. */
export async function resolveStaleById(q: Queryable, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await q.update(staleCompletions).set({ resolved: true, modified: new Date() }).where(inArray(staleCompletions.id, [...ids]));
}
