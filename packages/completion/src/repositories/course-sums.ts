import type { FixedStatements } from "./fixed-statements.js";

/**
 * Course-wide figures read from the per-course sums (`course_stat_sums`), which the enrollments' triggers keep in
 * the transaction that changes an enrollment, its course figures, its learner's roles or cohorts: a read sums a
 * handful of rows, whatever the number of learners. Sums are exact (numeric), rounded once to a double here.
 */

/** Sums over the learners that course statistics select (C12). */
export interface StatsSums {
  readonly learners: number;
  /** Sum of the selected learners' course `earned`. */
  readonly earned: number;
  /** Sum of stored possible values, and how many learners had one. */
  readonly storedPossible: number;
  readonly withAggregate: number;
  /** The course's structure digest as stored now, so a caller holding a cached tree can tell it is current. */
  readonly courseHash: string | null;
}

/**
 * The stats query (exported for the scale benchmark's EXPLAIN). $1 course key, then the cohort id and the excluded
 * roles when the variant filters on them. A row's `cohorts` are the ids of the course's cohorts its learners belong
 * to; `roles` their course roles.
 */
export function courseStatsSql(byCohort: boolean, byRoles: boolean): string {
  const rolesParam = byCohort ? 3 : 2;
  return `
    select coalesce(sum(s.learners), 0), coalesce(sum(s.earned), 0)::float8, coalesce(sum(s.possible), 0)::float8,
      coalesce(sum(s.with_possible), 0), (select c.structure_hash from completion.courses c where c.key = $1)
    from completion.course_stat_sums s
    where s.course_key = $1${byCohort ? " and $2::int = any(s.cohorts)" : ""}${byRoles ? ` and not (s.roles && $${rolesParam}::text[])` : ""}`;
}
const COURSE_STATS = [false, true].map((byCohort) => [false, true].map((byRoles) => courseStatsSql(byCohort, byRoles)));

/**
 * Sums the course-level progress of active learners of the course, limited
 * to a cohort's members and leaving out holders of any of `excludeRoles`.
 */
export async function courseStatsSums(
  statements: FixedStatements,
  courseKey: string,
  filters: { cohortId: number | null; excludeRoles: readonly string[] },
): Promise<StatsSums> {
  const byCohort = filters.cohortId !== null;
  const byRoles = filters.excludeRoles.length > 0;
  const values: unknown[] = [courseKey];
  if (byCohort) values.push(filters.cohortId);
  if (byRoles) values.push(filters.excludeRoles);
  const rows = await statements.rows(
    `completion_course_sums_${byCohort ? "cohort" : "all"}_${byRoles ? "roles" : "any"}`,
    COURSE_STATS[Number(byCohort)]![Number(byRoles)]!,
    values,
  );
  const row = rows[0];
  return {
    learners: Number(row?.[0] ?? 0),
    earned: Number(row?.[1] ?? 0),
    storedPossible: Number(row?.[2] ?? 0),
    withAggregate: Number(row?.[3] ?? 0),
    courseHash: (row?.[4] ?? null) as string | null,
  };
}

const COURSE_MEAN = `
  select coalesce(sum(s.learners), 0), coalesce(sum(s.percent), 0)::float8
  from completion.course_stat_sums s where s.course_key = $1 and s.roles = '{}'::text[]`;

/**
 * The mean course percent over active enrollments of learners who hold no
 * course role; a learner without course progress counts as 0 (C13); 0 when
 * there is no such learner.
 */
export async function meanCoursePercent(statements: FixedStatements, courseKey: string): Promise<number> {
  const row = (await statements.rows("completion_course_mean", COURSE_MEAN, [courseKey]))[0];
  const learners = Number(row?.[0] ?? 0);
  return learners === 0 ? 0 : Number(row?.[1] ?? 0) / learners;
}

const ACTIVE_LEARNERS = `select coalesce(sum(s.learners), 0) from completion.course_stat_sums s where s.course_key = $1`;

/** How many learners are actively enrolled in the course. */
export async function countActiveLearnersFromSums(statements: FixedStatements, courseKey: string): Promise<number> {
  const row = (await statements.rows("completion_course_active_learners", ACTIVE_LEARNERS, [courseKey]))[0];
  return Number(row?.[0] ?? 0);
}
