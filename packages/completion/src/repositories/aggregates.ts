import { and, eq, inArray, sql } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { aggregates, cohortMemberships, cohorts, courseRoles, enrollments } from "../db/schema.js";

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
}

/**
 * Sums the course-level progress of active learners of the course, limited
 * to a cohort's members and leaving out holders of any of `excludeRoles`.
 */
export async function courseStatsSums(
  q: Queryable,
  courseKey: string,
  filters: { cohortId: number | null; excludeRoles: readonly string[] },
): Promise<StatsSums> {
  const rows = await q
    .select({
      learners: sql<number>`count(*)`.mapWith(Number),
      earned: sql<number>`coalesce(sum(${enrollments.courseEarned}), 0)`.mapWith(Number),
      storedPossible: sql<number>`coalesce(sum(${enrollments.coursePossible}), 0)`.mapWith(Number),
      withAggregate: sql<number>`count(${enrollments.coursePossible})`.mapWith(Number),
    })
    .from(enrollments)
    .where(
      and(
        eq(enrollments.courseKey, courseKey),
        eq(enrollments.isActive, true),
        filters.cohortId === null
          ? undefined
          : sql`exists (select 1 from ${cohortMemberships} inner join ${cohorts} on ${cohorts.id} = ${cohortMemberships.cohortId}
              where ${cohortMemberships.cohortId} = ${filters.cohortId} and ${cohorts.courseKey} = ${enrollments.courseKey}
              and ${cohortMemberships.learnerId} = ${enrollments.learnerId})`,
        filters.excludeRoles.length === 0
          ? undefined
          : sql`not exists (select 1 from ${courseRoles} where ${courseRoles.courseKey} = ${enrollments.courseKey}
              and ${courseRoles.learnerId} = ${enrollments.learnerId} and ${inArray(courseRoles.role, [...filters.excludeRoles])})`,
      ),
    );
  const row = rows[0];
  return {
    learners: row?.learners ?? 0,
    earned: row?.earned ?? 0,
    storedPossible: row?.storedPossible ?? 0,
    withAggregate: row?.withAggregate ?? 0,
  };
}
