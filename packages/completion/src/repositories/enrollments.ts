import { and, asc, count, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { courses, enrollments, learners } from "../db/schema.js";
import { courseColumns, type CourseRow } from "./courses.js";

/** Whether the learner is actively enrolled; `lock` holds the enrollment row until the transaction ends. */
export async function hasActiveEnrollment(q: Queryable, learnerId: number, courseKey: string, lock = false): Promise<boolean> {
  const query = q
    .select({ learnerId: enrollments.learnerId })
    .from(enrollments)
    .where(and(eq(enrollments.courseKey, courseKey), eq(enrollments.learnerId, learnerId), eq(enrollments.isActive, true)));
  const rows = lock ? await query.for("update") : await query;
  return rows.length > 0;
}

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
 * Locks the enrollment of (username, course) for the rest of the transaction
 * and returns it with the course's stored structure digest, in one query;
 * null when the user has no enrollment in the course (or is unknown).
 */
export async function lockEnrollmentByUsername(
  q: Queryable,
  username: string,
  courseKey: string,
): Promise<{ learnerId: number; isActive: boolean; courseHash: string | null } | null> {
  // Raw SQL: PostgreSQL wants `FOR UPDATE OF` an unqualified name, so the enrollment gets an alias.
  const result = await q.execute<{ learner_id: number; is_active: boolean; course_hash: string | null }>(sql`
    select e.learner_id, e.is_active,
      (select ${courses.structureHash} from ${courses} where ${courses.key} = ${courseKey}) as course_hash
    from ${enrollments} e inner join ${learners} l on l.id = e.learner_id
    where l.username = ${username} and e.course_key = ${courseKey}
    for update of e`);
  const row = result.rows[0];
  return row ? { learnerId: row.learner_id, isActive: row.is_active, courseHash: row.course_hash } : null;
}
