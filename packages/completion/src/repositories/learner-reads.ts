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

// One row: the learner's facts and their stored aggregates in the course as one JSON object (block key →
// [earned, possible]), so the server sends one row, not one per block. $1 course key, $2 username[, $3 block keys].
const learnerInCourseSql = (filtered: boolean): string => `
  select x.id, x.username,
    exists (select 1 from completion.enrollments e where e.course_key = $1 and e.learner_id = x.id and e.is_active) as enrolled,
    exists (select 1 from completion.stale_completions s where s.username = x.username and s.course_key = $1 and not s.resolved) as stale,
    (select c.structure_hash from completion.courses c where c.key = $1) as course_hash,
    (select json_object_agg(a.block_key, json_build_array(a.earned, a.possible))::text from completion.aggregates a
      where a.course_key = $1 and a.learner_id = x.id${filtered ? " and a.block_key = any($3::text[])" : ""}) as aggregates
  from completion.learners x where x.username = $2`;
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
  const row = rows[0];
  if (!row) return null;
  const stored = new Map<string, StoredProgress>();
  if (row[5] !== null) {
    const figures = JSON.parse(row[5] as string) as Record<string, [number, number]>;
    for (const key in figures) {
      const [earned, possible] = figures[key]!;
      stored.set(key, { earned, possible });
    }
  }
  return {
    id: row[0] as number,
    username: row[1] as string,
    activelyEnrolled: row[2] as boolean,
    stale: row[3] as boolean,
    aggregates: stored,
    courseHash: row[4] as string | null,
  };
}

// The same for several courses at once (the list view): one row per (course, stored aggregate), or one for a course
// without any. $1 course keys, $2 username[, $3 block keys].
const learnerInCoursesSql = (filtered: boolean): string => `
  with l as materialized (select x.id, x.username from completion.learners x where x.username = $2),
  k as materialized (select distinct unnest($1::text[]) as course_key)
  select k.course_key, l.id, l.username,
    exists (select 1 from completion.enrollments e where e.course_key = k.course_key and e.learner_id = l.id and e.is_active),
    exists (select 1 from completion.stale_completions s where s.username = l.username and s.course_key = k.course_key and not s.resolved),
    (select c.structure_hash from completion.courses c where c.key = k.course_key),
    a.block_key, a.earned, a.possible
  from l cross join k left join completion.aggregates a
    on a.course_key = k.course_key and a.learner_id = l.id${filtered ? " and a.block_key = any($3::text[])" : ""}`;
const LEARNER_IN_COURSES_ALL = learnerInCoursesSql(false);
const LEARNER_IN_COURSES_SOME = learnerInCoursesSql(true);

/**
 * The learner with this username and their state in each of `courseKeys`
 * (by course key), in one query; empty for an unknown username. Block keys
 * name their course, so one list serves every course.
 */
export async function findLearnerInCourses(
  statements: FixedStatements,
  username: string,
  courseKeys: readonly string[],
  blockKeys: readonly string[] | "all",
): Promise<Map<string, LearnerInCourse>> {
  const found = new Map<string, LearnerInCourse & { aggregates: Map<string, StoredProgress> }>();
  if (courseKeys.length === 0) return found;
  const rows =
    blockKeys === "all"
      ? await statements.rows("completion_learner_in_courses_all", LEARNER_IN_COURSES_ALL, [courseKeys, username])
      : await statements.rows("completion_learner_in_courses_some", LEARNER_IN_COURSES_SOME, [courseKeys, username, blockKeys]);
  for (const row of rows) {
    const courseKey = row[0] as string;
    let learner = found.get(courseKey);
    if (!learner) {
      learner = {
        id: row[1] as number,
        username: row[2] as string,
        activelyEnrolled: row[3] as boolean,
        stale: row[4] as boolean,
        aggregates: new Map(),
        courseHash: row[5] as string | null,
      };
      found.set(courseKey, learner);
    }
    if (row[6] !== null) learner.aggregates.set(row[6] as string, { earned: row[7] as number, possible: row[8] as number });
  }
  return found;
}

// One row per (learner of the page, stored aggregate); only the page's rows are joined. $1 course key, $2 offset,
// $3 limit, then the block keys and the user ids when the variant filters on them.
//
// All learners of a course: the total comes from the course's sums, and the page does not skip $2 rows of the index.
// The bucket counts (active learners per 1,024 ids, kept with the sums) give the bucket holding the page's first row
// and how many rows precede it; the index is entered at that bucket's first id and skips fewer than 1,024 rows. The
// rows are the ones OFFSET $2 would give, read in the same snapshot.
//
// Some learners (`user_ids`): the list bounds the work; the total is an uncorrelated subquery over those ids.
export function pageActiveLearnersSql(byBlocks: boolean, byUsers: boolean): string {
  const blocksParam = 4;
  const usersParam = byBlocks ? 5 : 4;
  const tail = `
    inner join completion.learners l on l.id = p.id
    left join completion.aggregates a
      on a.course_key = $1 and a.learner_id = p.id${byBlocks ? ` and a.block_key = any($${blocksParam}::text[])` : ""}
    order by p.id`;
  if (byUsers) {
    const activeHere = `e.course_key = $1 and e.is_active and e.learner_id = any($${usersParam}::int[])`;
    return `
    select p.id, l.username, (select count(*) from completion.enrollments e where ${activeHere}) as total,
           (select c.structure_hash from completion.courses c where c.key = $1) as course_hash,
           a.block_key, a.earned, a.possible
    from (
      select e.learner_id as id from completion.enrollments e
      where ${activeHere}
      order by e.learner_id
      offset $2 limit $3
    ) p${tail}`;
  }
  return `
    with b as (
      select k.bucket, sum(k.learners) as n from completion.course_learner_buckets k where k.course_key = $1 group by k.bucket
    ), f as materialized (
      select bucket, before from (select bucket, n, sum(n) over (order by bucket) - n as before from b) c
      where before + n > $2 order by bucket limit 1
    )
    select p.id, l.username, (select coalesce(sum(s.learners), 0) from completion.course_stat_sums s where s.course_key = $1) as total,
           (select c.structure_hash from completion.courses c where c.key = $1) as course_hash,
           a.block_key, a.earned, a.possible
    from (
      select e.learner_id as id from completion.enrollments e
      where e.course_key = $1 and e.is_active and e.learner_id >= ((select bucket from f) << 10)
      order by e.learner_id
      offset (select $2::bigint - before from f) limit $3
    ) p${tail}`;
}
const PAGE_ACTIVE_LEARNERS = [false, true].map((byBlocks) => [false, true].map((byUsers) => pageActiveLearnersSql(byBlocks, byUsers)));

/** One page of a course's active learners with their stored aggregates, and the total (null when the page is empty). */
export async function pageActiveLearners(
  statements: FixedStatements,
  courseKey: string,
  userIds: readonly number[] | null,
  offset: number,
  limit: number,
  blockKeys: readonly string[] | "all",
): Promise<{
  learners: { id: number; username: string; aggregates: ReadonlyMap<string, StoredProgress> }[];
  total: number | null;
  courseHash: string | null;
}> {
  if (userIds !== null && userIds.length === 0) return { learners: [], total: 0, courseHash: null };
  const byBlocks = blockKeys !== "all";
  const byUsers = userIds !== null;
  const values: unknown[] = [courseKey, offset, limit];
  if (byBlocks) values.push(blockKeys);
  if (byUsers) values.push(userIds);
  const rows = await statements.rows(
    `completion_page_active_learners_${byBlocks ? "some" : "all"}_${byUsers ? "ids" : "any"}`,
    PAGE_ACTIVE_LEARNERS[Number(byBlocks)]![Number(byUsers)]!,
    values,
  );
  const byLearner = new Map<number, { id: number; username: string; aggregates: Map<string, StoredProgress> }>();
  for (const row of rows) {
    const id = row[0] as number;
    let learner = byLearner.get(id);
    if (!learner) {
      learner = { id, username: row[1] as string, aggregates: new Map() };
      byLearner.set(id, learner);
    }
    if (row[4] !== null) learner.aggregates.set(row[4] as string, { earned: row[5] as number, possible: row[6] as number });
  }
  const first = rows[0];
  return {
    learners: [...byLearner.values()],
    total: first ? Number(first[2]) : null,
    courseHash: first ? (first[3] as string | null) : null,
  };
}
