import { and, asc, count, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { courses, enrollments, learners } from "../db/schema.js";
import { courseColumns, type CourseRow } from "./courses.js";

/**
 * The learner's active enrollments in courses available to them: a course
 * whose structure is known but shows a learner nothing completable is left
 * out (the list's "no completable sections visible"); a course whose
 * structure is unknown stays (C6).
 */
function activeCoursesOf(learnerId: number, mobileOnly: boolean): SQL | undefined {
  return and(
    eq(enrollments.learnerId, learnerId),
    eq(enrollments.isActive, true),
    sql`(${courses.visibleCompletableBlocks} is null or ${courses.visibleCompletableBlocks} > 0)`,
    mobileOnly ? eq(courses.mobileAvailable, true) : undefined,
  );
}

/** How many available courses the learner is actively enrolled in. */
export async function countActiveCourses(q: Queryable, learnerId: number, mobileOnly: boolean): Promise<number> {
  const rows = await q
    .select({ n: count() })
    .from(enrollments)
    .innerJoin(courses, eq(courses.key, enrollments.courseKey))
    .where(activeCoursesOf(learnerId, mobileOnly));
  return rows[0]?.n ?? 0;
}

/** One page of the learner's active, available courses, by course key in byte order (C11). */
export async function listActiveCourses(
  q: Queryable,
  learnerId: number,
  mobileOnly: boolean,
  offset: number,
  limit: number,
): Promise<CourseRow[]> {
  return q
    .select(courseColumns)
    .from(enrollments)
    .innerJoin(courses, eq(courses.key, enrollments.courseKey))
    .where(activeCoursesOf(learnerId, mobileOnly))
    .orderBy(sql`${courses.key} collate "C"`)
    .offset(offset)
    .limit(limit);
}

function activeLearnersOf(courseKey: string, userIds: readonly number[] | null): SQL | undefined {
  return and(
    eq(enrollments.courseKey, courseKey),
    eq(enrollments.isActive, true),
    userIds === null ? undefined : inArray(enrollments.learnerId, [...userIds]),
  );
}

/** How many learners are actively enrolled in the course (optionally among `userIds`). */
export async function countActiveLearners(q: Queryable, courseKey: string, userIds: readonly number[] | null): Promise<number> {
  if (userIds !== null && userIds.length === 0) return 0;
  const rows = await q.select({ n: count() }).from(enrollments).where(activeLearnersOf(courseKey, userIds));
  return rows[0]?.n ?? 0;
}

/** One page of the course's actively enrolled learners, by learner id (C11). */
export async function listActiveLearners(
  q: Queryable,
  courseKey: string,
  userIds: readonly number[] | null,
  offset: number,
  limit: number,
): Promise<{ id: number; username: string }[]> {
  if (userIds !== null && userIds.length === 0) return [];
  return q
    .select({ id: learners.id, username: learners.username })
    .from(enrollments)
    .innerJoin(learners, eq(learners.id, enrollments.learnerId))
    .where(activeLearnersOf(courseKey, userIds))
    .orderBy(asc(enrollments.learnerId))
    .offset(offset)
    .limit(limit);
}

/** Creates or updates enrollments. */
export async function upsertEnrollments(
  q: Queryable,
  rows: readonly { learnerId: number; courseKey: string; isActive: boolean; mode: string }[],
): Promise<void> {
  for (let at = 0; at < rows.length; at += 1000) {
    await q
      .insert(enrollments)
      .values(rows.slice(at, at + 1000).map((row) => ({ ...row })))
      .onConflictDoUpdate({
        target: [enrollments.courseKey, enrollments.learnerId],
        set: { isActive: sql`excluded.is_active`, mode: sql`excluded.mode` },
      });
  }
}

/** Copies a learner's course-level progress onto their enrollment (null: none), for statistics and means. */
export async function setEnrollmentCourseProgress(
  q: Queryable,
  learnerId: number,
  courseKey: string,
  progress: { earned: number; possible: number; percent: number } | null,
): Promise<void> {
  await q
    .update(enrollments)
    .set({ courseEarned: progress?.earned ?? null, coursePossible: progress?.possible ?? null, coursePercent: progress?.percent ?? null })
    .where(and(eq(enrollments.courseKey, courseKey), eq(enrollments.learnerId, learnerId)));
}

/**
 * Takes the locks of a completion batch, in the order of
 * `aggregation/README.md` (the course row shared, the learner row key-shared,
 * the enrollment for update, each held to the end of the transaction), and
 * returns the enrollment of (username, course) with the course's structure
 * digest as it is once the locks are held, in one query; null when the user
 * has no enrollment in the course (or is unknown). The course row is locked
 * so that a bulk load changing its tree is either waited for (and its tree
 * returned) or waits for this transaction.
 */
export async function lockEnrollmentByUsername(
  q: Queryable,
  username: string,
  courseKey: string,
): Promise<{ learnerId: number; isActive: boolean; courseHash: string | null } | null> {
  // Raw SQL: PostgreSQL wants the locking clauses to name aliases. They lock in the order written.
  const result = await q.execute<{ learner_id: number; is_active: boolean; course_hash: string | null }>(sql`
    select e.learner_id, e.is_active, c.structure_hash as course_hash
    from ${enrollments} e
      inner join ${learners} l on l.id = e.learner_id
      inner join ${courses} c on c.key = e.course_key
    where l.username = ${username} and e.course_key = ${courseKey}
    for share of c for key share of l for update of e`);
  const row = result.rows[0];
  return row ? { learnerId: row.learner_id, isActive: row.is_active, courseHash: row.course_hash } : null;
}

/**
 * Takes the locks of work on a learner's aggregates in a course (a stale
 * recomputation), in the order of `aggregation/README.md`: the course row
 * shared and the learner row key-shared, then their enrollment, if any, for
 * update; all held to the end of the transaction. Returns the learner's id,
 * or null when the learner or the course is unknown (nothing is locked then).
 */
export async function lockLearnerInCourse(q: Queryable, username: string, courseKey: string): Promise<number | null> {
  const learner = await q.execute<{ id: number }>(sql`
    select l.id from ${learners} l, ${courses} c
    where l.username = ${username} and c.key = ${courseKey}
    for share of c for key share of l`);
  const id = learner.rows[0]?.id;
  if (id === undefined) return null;
  await q.execute(sql`select 1 from ${enrollments} where ${enrollments.courseKey} = ${courseKey} and ${enrollments.learnerId} = ${id} for update`);
  return id;
}

/**
 * Locks the enrollments of (learner, course) pairs, those that exist, for the
 * rest of the transaction: what a bulk load does before it writes
 * completions, so that it takes each pair's enrollment before the pair's
 * stale records, completions and aggregates, as everyone else does.
 */
export async function lockEnrollments(q: Queryable, pairs: readonly { learnerId: number; courseKey: string }[]): Promise<void> {
  for (let at = 0; at < pairs.length; at += 5000) {
    const slice = pairs.slice(at, at + 5000);
    await q.execute(sql`
      select 1 from ${enrollments}
      where (${enrollments.courseKey}, ${enrollments.learnerId}) in (
        select * from unnest(${sql.param(slice.map((pair) => pair.courseKey))}::text[], ${sql.param(slice.map((pair) => pair.learnerId))}::integer[]))
      order by ${enrollments.courseKey}, ${enrollments.learnerId}
      for update`);
  }
}
