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

/** Limits a join on aggregates to some blocks; `"all"` (every stored block is wanted) needs no filter. */
function blockFilter(blockKeys: readonly string[] | "all"): SQL {
  return blockKeys === "all" ? sql`` : sql`and a.block_key = any(${sql.param([...blockKeys])}::text[])`;
}

/** The learner with this username and their state in a course, or null for an unknown username. */
export async function findLearnerInCourse(
  q: Queryable,
  username: string,
  courseKey: string,
  blockKeys: readonly string[] | "all",
): Promise<LearnerInCourse | null> {
  // One row per stored aggregate (plain rows parse faster than arrays); the learner's facts are computed once.
  const result = await q.execute<{
    id: number;
    username: string;
    enrolled: boolean;
    stale: boolean;
    course_hash: string | null;
    block_key: string | null;
    aggregation_name: string | null;
    earned: number | null;
    possible: number | null;
    percent: number | null;
  }>(sql`
    with l as materialized (
      select ${learners.id} as id, ${learners.username} as username,
        exists (select 1 from ${enrollments} where ${enrollments.courseKey} = ${courseKey}
                and ${enrollments.learnerId} = ${learners.id} and ${enrollments.isActive}) as enrolled,
        exists (select 1 from ${staleCompletions} where ${staleCompletions.username} = ${learners.username}
                and ${staleCompletions.courseKey} = ${courseKey} and not ${staleCompletions.resolved}) as stale,
        (select ${courses.structureHash} from ${courses} where ${courses.key} = ${courseKey}) as course_hash
      from ${learners} where ${learners.username} = ${username}
    )
    select l.id, l.username, l.enrolled, l.stale, l.course_hash,
      a.block_key, a.aggregation_name, a.earned, a.possible, a.percent
    from l left join ${aggregates} a
      on a.course_key = ${courseKey} and a.learner_id = l.id ${blockFilter(blockKeys)}`);
  const first = result.rows[0];
  if (!first) return null;
  const stored = new Map<string, AggregateRow>();
  for (const row of result.rows) {
    if (row.block_key === null) continue;
    stored.set(row.block_key, {
      blockKey: row.block_key,
      aggregationName: row.aggregation_name!,
      earned: row.earned!,
      possible: row.possible!,
      percent: row.percent!,
    });
  }
  return {
    id: first.id,
    username: first.username,
    activelyEnrolled: first.enrolled,
    stale: first.stale,
    aggregates: stored,
    courseHash: first.course_hash,
  };
}

/** One page of a course's active learners with their stored aggregates, and the total (null when the page is empty). */
export async function pageActiveLearners(
  q: Queryable,
  courseKey: string,
  userIds: readonly number[] | null,
  offset: number,
  limit: number,
  blockKeys: readonly string[] | "all",
): Promise<{
  learners: { id: number; username: string; aggregates: ReadonlyMap<string, AggregateRow> }[];
  total: number | null;
  courseHash: string | null;
}> {
  if (userIds !== null && userIds.length === 0) return { learners: [], total: 0, courseHash: null };
  const activeHere = sql`${enrollments.courseKey} = ${courseKey} and ${enrollments.isActive}
    ${userIds === null ? sql`` : sql`and ${enrollments.learnerId} = any(${sql.param([...userIds])}::int[])`}`;
  // The total is an uncorrelated subquery (run once, on enrollments alone); only the page's rows are joined,
  // one row per (learner, stored aggregate).
  const result = await q.execute<{
    id: number;
    username: string;
    total: string | number;
    course_hash: string | null;
    block_key: string | null;
    aggregation_name: string | null;
    earned: number | null;
    possible: number | null;
    percent: number | null;
  }>(sql`
    select p.id, l.username, (select count(*) from ${enrollments} where ${activeHere}) as total,
           (select ${courses.structureHash} from ${courses} where ${courses.key} = ${courseKey}) as course_hash,
           a.block_key, a.aggregation_name, a.earned, a.possible, a.percent
    from (
      select ${enrollments.learnerId} as id from ${enrollments}
      where ${activeHere}
      order by ${enrollments.learnerId}
      offset ${offset} limit ${limit}
    ) p
    inner join ${learners} l on l.id = p.id
    left join ${aggregates} a
      on a.course_key = ${courseKey} and a.learner_id = p.id ${blockFilter(blockKeys)}
    order by p.id`);
  const byLearner = new Map<number, { id: number; username: string; aggregates: Map<string, AggregateRow> }>();
  for (const row of result.rows) {
    let learner = byLearner.get(row.id);
    if (!learner) {
      learner = { id: row.id, username: row.username, aggregates: new Map() };
      byLearner.set(row.id, learner);
    }
    if (row.block_key !== null) {
      learner.aggregates.set(row.block_key, {
        blockKey: row.block_key,
        aggregationName: row.aggregation_name!,
        earned: row.earned!,
        possible: row.possible!,
        percent: row.percent!,
      });
    }
  }
  const first = result.rows[0];
  return {
    learners: [...byLearner.values()],
    total: first ? Number(first.total) : null,
    courseHash: first ? first.course_hash : null,
  };
}
