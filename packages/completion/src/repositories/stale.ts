import { and, eq, inArray, sql } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { blockCompletions, enrollments, learners, staleCompletions } from "../db/schema.js";

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

/**
 * Unresolved stale records of one learner in one course, locked for the rest
 * of the transaction; take the learner's locks in the course first (see
 * `aggregation/README.md`).
 */
export async function lockUnresolvedStale(q: Queryable, username: string, courseKey: string): Promise<StaleRow[]> {
  return q
    .select(columns)
    .from(staleCompletions)
    .where(and(eq(staleCompletions.username, username), eq(staleCompletions.courseKey, courseKey), eq(staleCompletions.resolved, false)))
    .orderBy(staleCompletions.id)
    .for("update");
}

/**
 * Locks the unresolved stale records of (username, course) pairs for the rest
 * of the transaction: what a bulk load does after the pairs' enrollments and
 * before their completions and aggregates (see `aggregation/README.md`).
 */
export async function lockUnresolvedStaleOf(q: Queryable, pairs: readonly { username: string; courseKey: string }[]): Promise<void> {
  for (let at = 0; at < pairs.length; at += 5000) {
    const slice = pairs.slice(at, at + 5000);
    await q.execute(sql`
      select 1 from ${staleCompletions}
      where ${staleCompletions.resolved} = false and (${staleCompletions.username}, ${staleCompletions.courseKey}) in (
        select * from unnest(${sql.param(slice.map((pair) => pair.username))}::text[], ${sql.param(slice.map((pair) => pair.courseKey))}::text[]))
      order by ${staleCompletions.id}
      for update`);
  }
}

/**
 * The (username, course) pairs of the oldest `limit` unresolved records, the
 * pair of the oldest first; nothing is locked.
 */
export async function findStalePairs(q: Queryable, limit: number): Promise<{ username: string; courseKey: string }[]> {
  const result = await q.execute<{ username: string; course_key: string }>(sql`
    select oldest.username, oldest.course_key
    from (select ${staleCompletions.id} as id, ${staleCompletions.username} as username, ${staleCompletions.courseKey} as course_key
          from ${staleCompletions} where ${staleCompletions.resolved} = false order by ${staleCompletions.id} limit ${limit}) oldest
    group by oldest.username, oldest.course_key
    order by min(oldest.id)`);
  return result.rows.map((row) => ({ username: row.username, courseKey: row.course_key }));
}

/** Marks every unresolved record of (username, course) resolved. */
export async function resolveStale(q: Queryable, username: string, courseKey: string): Promise<void> {
  await q
    .update(staleCompletions)
    .set({ resolved: true, modified: new Date() })
    .where(and(eq(staleCompletions.username, username), eq(staleCompletions.courseKey, courseKey), eq(staleCompletions.resolved, false)));
}

/**
 * Records that every learner of a course needs recomputing (its structure
 * changed, or a forced rebuild): those enrolled, active or not, and those
 * holding completions in it without an enrollment (a bulk load may store
 * them), whose stored aggregates would otherwise outlive the tree they were
 * computed on and show once the learner enrolls.
 */
export async function markCourseStale(q: Queryable, courseKey: string, force: boolean): Promise<number> {
  const result = await q.execute(sql`
    insert into ${staleCompletions} (${sql.identifier("username")}, ${sql.identifier("course_key")}, ${sql.identifier("force")})
    select ${learners.username}, ${courseKey}, ${force}
    from ${learners}
    where ${learners.id} in (
      select ${enrollments.learnerId} from ${enrollments} where ${enrollments.courseKey} = ${courseKey}
      union
      select ${blockCompletions.learnerId} from ${blockCompletions} where ${blockCompletions.courseKey} = ${courseKey})`);
  return result.rowCount ?? 0;
}

/**
 * Records that a learner needs recomputing in every course where they are
 * enrolled or hold completions: stale records go by username, so a learner
 * renamed by a bulk load would otherwise leave theirs behind under the old
 * name.
 */
export async function markLearnerStale(q: Queryable, learnerId: number): Promise<number> {
  const result = await q.execute(sql`
    insert into ${staleCompletions} (${sql.identifier("username")}, ${sql.identifier("course_key")}, ${sql.identifier("force")})
    select ${learners.username}, c.course_key, false
    from ${learners} cross join (
      select ${enrollments.courseKey} as course_key from ${enrollments} where ${enrollments.learnerId} = ${learnerId}
      union
      select ${blockCompletions.courseKey} from ${blockCompletions} where ${blockCompletions.learnerId} = ${learnerId}) c
    where ${learners.id} = ${learnerId}`);
  return result.rowCount ?? 0;
}

/** Marks records resolved by id. */
export async function resolveStaleById(q: Queryable, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await q.update(staleCompletions).set({ resolved: true, modified: new Date() }).where(inArray(staleCompletions.id, [...ids]));
}
