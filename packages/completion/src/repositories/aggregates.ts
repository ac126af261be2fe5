import { and, eq, inArray, sql } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import type { FixedStatements } from "./fixed-statements.js";
import { aggregates, courseRoles, enrollments } from "../db/schema.js";

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

/**
 * The mean course percent over active enrollments of learners who hold no
 * course role; a learner without course progress counts as 0 (C13). Reads the
 * copy of the course-level aggregate kept on each enrollment.
 */
export async function meanCoursePercent(q: Queryable, courseKey: string): Promise<number> {
  const rows = await q
    .select({ mean: sql<number | null>`avg(coalesce(${enrollments.coursePercent}, 0))`.mapWith(Number) })
    .from(enrollments)
    .where(
      and(
        eq(enrollments.courseKey, courseKey),
        eq(enrollments.isActive, true),
        sql`not exists (select 1 from ${courseRoles} where ${courseRoles.courseKey} = ${enrollments.courseKey} and ${courseRoles.learnerId} = ${enrollments.learnerId})`,
      ),
    );
  return rows[0]?.mean ?? 0;
}

/** Sums over the learners that course statistics select (C12). */
export interface StatsSums {
  readonly learners: number;
  readonly earned: number;
  /** Sum of stored possible values, and how many learners had one. */
  readonly storedPossible: number;
  readonly withAggregate: number;
  /** The course's structure digest as stored now, so a caller holding a cached tree can tell it is current. */
  readonly courseHash: string | null;
}

// One scan of the course's enrollments (C14: the course-level figures are copied onto them), with the course's stored
// structure digest. $1 course key, then the cohort id and the excluded roles when the variant filters on them.
function courseStatsSql(byCohort: boolean, byRoles: boolean): string {
  const rolesParam = byCohort ? 3 : 2;
  return `
    select count(*), coalesce(sum(e.course_earned), 0), coalesce(sum(e.course_possible), 0), count(e.course_possible),
      (select c.structure_hash from completion.courses c where c.key = $1)
    from completion.enrollments e
    where e.course_key = $1 and e.is_active${
      byCohort
        ? `
      and exists (select 1 from completion.cohort_memberships m inner join completion.cohorts c on c.id = m.cohort_id
                  where m.cohort_id = $2 and c.course_key = e.course_key and m.learner_id = e.learner_id)`
        : ""
    }${
      byRoles
        ? `
      and not exists (select 1 from completion.course_roles r
                      where r.course_key = e.course_key and r.learner_id = e.learner_id and r.role = any($${rolesParam}::text[]))`
        : ""
    }`;
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
    `completion_course_stats_${byCohort ? "cohort" : "all"}_${byRoles ? "roles" : "any"}`,
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
