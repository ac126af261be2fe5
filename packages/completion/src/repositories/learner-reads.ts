import { sql, type SQL } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { aggregates, courses, enrollments, learners } from "../db/schema.js";
import type { AggregateRow } from "./aggregates.js";
import type { FixedStatements } from "./fixed-statements.js";

/** A learner's stored figures for one block, as reads use them. */
export interface StoredProgress {
  readonly earned: number;
  readonly possible: number;
}

/** A learner as a course read needs them, in one query: enrollment, staleness and the stored aggregates asked for. */
export interface LearnerInCourse {
  readonly id: number;
  readonly username: string;
  readonly activelyEnrolled: boolean;
  readonly stale: boolean;
  readonly aggregates: ReadonlyMap<string, StoredProgress>;
  /** The course's structure digest as stored now, so a caller holding a cached tree can tell it is current. */
  readonly courseHash: string | null;
}

/** Limits a join on aggregates to some blocks; `"all"` (every stored block is wanted) needs no filter. */
function blockFilter(blockKeys: readonly string[] | "all"): SQL {
  return blockKeys === "all" ? sql`` : sql`and a.block_key = any(${sql.param([...blockKeys])}::text[])`;
}

// One row per stored aggregate, the learner's facts computed once (the CTE). $1 course key, $2 username[, $3 block keys].
const learnerInCourseSql = (filtered: boolean): string => `
  with l as materialized (
    select x.id, x.username,
      exists (select 1 from completion.enrollments e where e.course_key = $1 and e.learner_id = x.id and e.is_active) as enrolled,
      exists (select 1 from completion.stale_completions s where s.username = x.username and s.course_key = $1 and not s.resolved) as stale,
      (select c.structure_hash from completion.courses c where c.key = $1) as course_hash
    from completion.learners x where x.username = $2
  )
  select l.id, l.username, l.enrolled, l.stale, l.course_hash, a.block_key, a.earned, a.possible
  from l left join completion.aggregates a
    on a.course_key = $1 and a.learner_id = l.id${filtered ? " and a.block_key = any($3::text[])" : ""}`;
const LEARNER_IN_COURSE_ALL = learnerInCourseSql(false);
const LEARNER_IN_COURSE_SOME = learnerInCourseSql(true);

/** The learner with this username and their state in a course, or null for an unknown username. */
export async function findLearnerInCourse(
  statements: FixedStatements,
  username: string,
  courseKey: string,
  blockKeys: readonly string[] | "all",
): Promise<LearnerInCourse | null> {
  const rows =
    blockKeys === "all"
      ? await statements.rows("completion_learner_in_course_all", LEARNER_IN_COURSE_ALL, [courseKey, username])
      : await statements.rows("completion_learner_in_course_some", LEARNER_IN_COURSE_SOME, [courseKey, username, blockKeys]);
  const first = rows[0];
  if (!first) return null;
  const stored = new Map<string, StoredProgress>();
  for (const row of rows) {
    if (row[5] === null) continue;
    stored.set(row[5] as string, { earned: row[6] as number, possible: row[7] as number });
  }
  return {
    id: first[0] as number,
    username: first[1] as string,
    activelyEnrolled: first[2] as boolean,
    stale: first[3] as boolean,
    aggregates: stored,
    courseHash: first[4] as string | null,
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
