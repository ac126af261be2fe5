import { sql, type SQL } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { aggregates, courses, enrollments, learners, staleCompletions } from "../db/schema.js";
import type { AggregateRow } from "./aggregates.js";

/** A learner as a course read needs them, in one query: enrollment, staleness and the stored aggregates asked for. */
export interface LearnerInCourse {
  readonly id: number;
  readonly username: string;
  readonly activelyEnrolled: boolean;
  readonly stale: boolean;
  readonly aggregates: ReadonlyMap<string, AggregateRow>;
  /** The course's structure digest as stored now, so a caller holding a cached tree can tell it is current. */
  readonly courseHash: string | null;
}

/** A lateral join giving one learner's stored aggregates of some blocks as parallel arrays. */
const aggregateArrays = (courseKey: string, learnerId: SQL, blockKeys: readonly string[]): SQL => sql`
  left join lateral (
    select array_agg(${aggregates.blockKey}) as block_keys, array_agg(${aggregates.aggregationName}) as names,
           array_agg(${aggregates.earned}) as earned, array_agg(${aggregates.possible}) as possible,
           array_agg(${aggregates.percent}) as percent
    from ${aggregates}
    where ${aggregates.courseKey} = ${courseKey} and ${aggregates.learnerId} = ${learnerId}
      and ${aggregates.blockKey} = any(${sql.param([...blockKeys])}::text[])
  ) agg on true`;

/** The columns of {@link aggregateArrays}: parallel arrays, null when the learner has no stored row. */
type ArrayColumns = {
  block_keys: string[] | null;
  names: string[] | null;
  earned: number[] | null;
  possible: number[] | null;
  percent: number[] | null;
};

/** Stored aggregates from the parallel arrays, keyed by block. */
function arraysOf(row: ArrayColumns): Map<string, AggregateRow> {
  const result = new Map<string, AggregateRow>();
  (row.block_keys ?? []).forEach((blockKey, index) => {
    result.set(blockKey, {
      blockKey,
      aggregationName: row.names![index]!,
      earned: row.earned![index]!,
      possible: row.possible![index]!,
      percent: row.percent![index]!,
    });
  });
  return result;
}

/** The learner with this username and their state in a course, or null for an unknown username. */
export async function findLearnerInCourse(
  q: Queryable,
  username: string,
  courseKey: string,
  blockKeys: readonly string[],
): Promise<LearnerInCourse | null> {
  const result = await q.execute<{ id: number; username: string; enrolled: boolean; stale: boolean; course_hash: string | null } & ArrayColumns>(sql`
    select l.id, l.username, (select ${courses.structureHash} from ${courses} where ${courses.key} = ${courseKey}) as course_hash,
      exists (select 1 from ${enrollments} where ${enrollments.courseKey} = ${courseKey}
              and ${enrollments.learnerId} = l.id and ${enrollments.isActive}) as enrolled,
      exists (select 1 from ${staleCompletions} where ${staleCompletions.username} = l.username
              and ${staleCompletions.courseKey} = ${courseKey} and not ${staleCompletions.resolved}) as stale,
      agg.block_keys, agg.names, agg.earned, agg.possible, agg.percent
    from ${learners} l
    ${aggregateArrays(courseKey, sql`l.id`, blockKeys)}
    where l.username = ${username}`);
  const row = result.rows[0];
  if (!row) return null;
  return {
    id: row.id,
    username: row.username,
    activelyEnrolled: row.enrolled,
    stale: row.stale,
    aggregates: arraysOf(row),
    courseHash: row.course_hash,
  };
}

/** One page of a course's active learners with their stored aggregates, and the total (null when the page is empty). */
export async function pageActiveLearners(
  q: Queryable,
  courseKey: string,
  userIds: readonly number[] | null,
  offset: number,
  limit: number,
  blockKeys: readonly string[],
): Promise<{
  learners: { id: number; username: string; aggregates: ReadonlyMap<string, AggregateRow> }[];
  total: number | null;
  courseHash: string | null;
}> {
  if (userIds !== null && userIds.length === 0) return { learners: [], total: 0, courseHash: null };
  const activeHere = sql`${enrollments.courseKey} = ${courseKey} and ${enrollments.isActive}
    ${userIds === null ? sql`` : sql`and ${enrollments.learnerId} = any(${sql.param([...userIds])}::int[])`}`;
  // The total is an uncorrelated subquery (run once, on enrollments alone); only the page's rows are joined.
  const result = await q.execute<{ id: number; username: string; total: string | number; course_hash: string | null } & ArrayColumns>(sql`
    select p.id, l.username, (select count(*) from ${enrollments} where ${activeHere}) as total,
           (select ${courses.structureHash} from ${courses} where ${courses.key} = ${courseKey}) as course_hash,
           agg.block_keys, agg.names, agg.earned, agg.possible, agg.percent
    from (
      select ${enrollments.learnerId} as id from ${enrollments}
      where ${activeHere}
      order by ${enrollments.learnerId}
      offset ${offset} limit ${limit}
    ) p
    inner join ${learners} l on l.id = p.id
    ${aggregateArrays(courseKey, sql`p.id`, blockKeys)}
    order by p.id`);
  const first = result.rows[0];
  return {
    learners: result.rows.map((row) => ({ id: row.id, username: row.username, aggregates: arraysOf(row) })),
    total: first ? Number(first.total) : null,
    courseHash: first ? first.course_hash : null,
  };
}
