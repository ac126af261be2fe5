import { sql } from "drizzle-orm";
import type { CompletionContext } from "../../src/context.js";
import type { StatsSums } from "../../src/repositories/course-sums.js";

/**
 * The statistics sums as the service computed them before it kept them: one
 * scan of the course's active enrollments, filtered by cohort membership and
 * course roles, summing the course figures copied onto each enrollment. The
 * only change is that `earned` is summed exactly (`completion.exact_numeric`)
 * and rounded once, as the kept sums are, instead of a float8 sum whose last
 * bits depend on the order PostgreSQL happens to read the rows in.
 */
export async function courseStatsSumsByScan(
  ctx: CompletionContext,
  courseKey: string,
  filters: { cohortId: number | null; excludeRoles: readonly string[] },
): Promise<StatsSums> {
  const byCohort =
    filters.cohortId === null
      ? sql``
      : sql`and exists (select 1 from completion.cohort_memberships m inner join completion.cohorts c on c.id = m.cohort_id
              where m.cohort_id = ${filters.cohortId} and c.course_key = e.course_key and m.learner_id = e.learner_id)`;
  const byRoles =
    filters.excludeRoles.length === 0
      ? sql``
      : sql`and not exists (select 1 from completion.course_roles r
              where r.course_key = e.course_key and r.learner_id = e.learner_id and r.role in ${[...filters.excludeRoles]})`;
  const result = await ctx.db.execute<{ learners: string; earned: number; possible: number; with_aggregate: string; course_hash: string | null }>(sql`
    select count(*) as learners, coalesce(sum(completion.exact_numeric(e.course_earned)), 0)::float8 as earned,
      coalesce(sum(e.course_possible), 0) as possible, count(e.course_possible) as with_aggregate,
      (select c.structure_hash from completion.courses c where c.key = ${courseKey}) as course_hash
    from completion.enrollments e
    where e.course_key = ${courseKey} and e.is_active ${byCohort} ${byRoles}`);
  const row = result.rows[0]!;
  return {
    learners: Number(row.learners),
    earned: Number(row.earned),
    storedPossible: Number(row.possible),
    withAggregate: Number(row.with_aggregate),
    courseHash: row.course_hash,
  };
}

/** C13's mean as a scan of the enrollments of learners without a course role (the percent summed exactly). */
export async function meanCoursePercentByScan(ctx: CompletionContext, courseKey: string): Promise<number> {
  const result = await ctx.db.execute<{ learners: string; percent: number }>(sql`
    select count(*) as learners, coalesce(sum(completion.exact_numeric(coalesce(e.course_percent, 0))), 0)::float8 as percent
    from completion.enrollments e
    where e.course_key = ${courseKey} and e.is_active
      and not exists (select 1 from completion.course_roles r where r.course_key = e.course_key and r.learner_id = e.learner_id)`);
  const row = result.rows[0]!;
  return Number(row.learners) === 0 ? 0 : Number(row.percent) / Number(row.learners);
}

/** The ids of one OFFSET page of the course's active learners, by id, and their number. */
export async function activeLearnersPageByScan(ctx: CompletionContext, courseKey: string, offset: number, limit: number): Promise<{ count: number; ids: number[] }> {
  const ids = await ctx.db.execute<{ learner_id: number }>(sql`
    select learner_id from completion.enrollments where course_key = ${courseKey} and is_active order by learner_id offset ${offset} limit ${limit}`);
  const count = await ctx.db.execute<{ n: string }>(sql`select count(*) as n from completion.enrollments where course_key = ${courseKey} and is_active`);
  return { count: Number(count.rows[0]!.n), ids: ids.rows.map((row) => row.learner_id) };
}
