import { sql } from "drizzle-orm";
import { aggregateTree } from "../../src/aggregation/aggregate-tree.js";
import { percentOf } from "../../src/aggregation/completion-math.js";
import type { CompletionContext } from "../../src/context.js";
import type { CourseTree } from "../../src/domain/course-tree.js";

/**
 * A digest of everything the service stores, so a test can tell that a
 * refused request wrote nothing. A learner's Sign-on uid is left out: linking
 * a caller on first sight happens before the request is judged.
 */
export async function storedStateDigest(ctx: CompletionContext): Promise<string> {
  const tables = [
    "(select id, username, email from completion.learners) t",
    "completion.courses t",
    "completion.blocks t",
    "completion.enrollments t",
    "completion.course_roles t",
    "completion.cohorts t",
    "completion.cohort_memberships t",
    "completion.block_completions t",
    "completion.aggregates t",
    "completion.stale_completions t",
    "(select course_key, cohorts, roles, learners, earned, possible, with_possible, percent from completion.course_stat_sums) t",
    "(select course_key, bucket, learners from completion.course_learner_buckets) t",
  ];
  const parts = tables.map((table) => `(select coalesce(string_agg(t::text, ',' order by t::text), '') from ${table})`);
  const result = await ctx.db.execute<{ digest: string }>(sql.raw(`select md5(concat_ws('|', ${parts.join(", ")})) as digest`));
  return result.rows[0]!.digest;
}

/**
 * Where stored aggregates differ from a recomputation from scratch: for
 * every learner and course without an unresolved stale record (C14 lets
 * those lag), each stored aggregate row and the course figures copied onto
 * the enrollment must equal what the learner's completions give on the
 * current tree, to the last bit (the sums run in the same order).
 */
export async function aggregateMismatches(ctx: CompletionContext): Promise<string[]> {
  const rows = async <T>(text: string): Promise<T[]> => (await ctx.db.execute(sql.raw(text))).rows as unknown as T[];
  const stale = new Set(
    (await rows<{ learner_id: number; course_key: string }>(
      `select l.id as learner_id, s.course_key from completion.stale_completions s join completion.learners l on l.username = s.username where not s.resolved`,
    )).map((row) => `${row.learner_id} ${row.course_key}`),
  );
  const completions = new Map<string, Map<string, number>>();
  for (const row of await rows<{ learner_id: number; course_key: string; block_key: string; completion: number }>(
    `select learner_id, course_key, block_key, completion from completion.block_completions`,
  )) {
    const pair = `${row.learner_id} ${row.course_key}`;
    if (!completions.has(pair)) completions.set(pair, new Map());
    completions.get(pair)!.set(row.block_key, Number(row.completion));
  }
  const storedAggregates = await rows<{ learner_id: number; course_key: string; block_key: string; aggregation_name: string; earned: number; possible: number; percent: number }>(
    `select learner_id, course_key, block_key, aggregation_name, earned, possible, percent from completion.aggregates`,
  );
  const enrollmentFigures = await rows<{ learner_id: number; course_key: string; course_earned: number; course_possible: number; course_percent: number }>(
    `select learner_id, course_key, course_earned, course_possible, course_percent from completion.enrollments where course_earned is not null`,
  );

  const problems: string[] = [];
  const trees = new Map<string, CourseTree | null>();
  const treeOf = async (courseKey: string): Promise<CourseTree | null> => {
    if (!trees.has(courseKey)) trees.set(courseKey, (await ctx.structures.get(ctx.db, courseKey))?.tree ?? null);
    return trees.get(courseKey)!;
  };
  const recomputed = new Map<string, ReturnType<typeof aggregateTree> | null>();
  const progressOf = async (learnerId: number, courseKey: string): Promise<ReturnType<typeof aggregateTree> | null> => {
    const pair = `${learnerId} ${courseKey}`;
    if (!recomputed.has(pair)) {
      const tree = await treeOf(courseKey);
      recomputed.set(pair, tree ? aggregateTree(tree, completions.get(pair) ?? new Map()) : null);
    }
    return recomputed.get(pair)!;
  };

  for (const row of storedAggregates) {
    if (stale.has(`${row.learner_id} ${row.course_key}`)) continue;
    const progress = (await progressOf(row.learner_id, row.course_key))?.get(row.block_key);
    const where = `learner ${row.learner_id} in ${row.course_key}, block ${row.block_key}`;
    if (!progress) {
      problems.push(`${where}: a stored aggregate of a block that is not in the course tree`);
      continue;
    }
    const expected = { type: (await treeOf(row.course_key))?.byKey.get(row.block_key)?.type, earned: progress.earned, possible: progress.possible, percent: percentOf(progress) };
    const stored = { type: row.aggregation_name, earned: Number(row.earned), possible: Number(row.possible), percent: Number(row.percent) };
    if (JSON.stringify(stored) !== JSON.stringify(expected)) problems.push(`${where}: stored ${JSON.stringify(stored)}, recomputed ${JSON.stringify(expected)}`);
  }
  for (const row of enrollmentFigures) {
    if (stale.has(`${row.learner_id} ${row.course_key}`)) continue;
    const tree = await treeOf(row.course_key);
    const progress = tree ? (await progressOf(row.learner_id, row.course_key))?.get(tree.root.key) : undefined;
    const stored = { earned: Number(row.course_earned), possible: Number(row.course_possible), percent: Number(row.course_percent) };
    const expected = progress ? { earned: progress.earned, possible: progress.possible, percent: percentOf(progress) } : null;
    if (JSON.stringify(stored) !== JSON.stringify(expected)) {
      problems.push(`learner ${row.learner_id} in ${row.course_key}: enrollment figures ${JSON.stringify(stored)}, recomputed ${JSON.stringify(expected)}`);
    }
  }
  problems.push(...(await courseSumsMismatches(ctx)));
  return problems;
}

/**
 * Where the kept per-course sums (and bucket counts) differ from a grouping of the active enrollments, and where an
 * enrollment's statistics group differs from its learner's roles and cohorts in the course.
 */
export async function courseSumsMismatches(ctx: Pick<CompletionContext, "db">): Promise<string[]> {
  const result = await ctx.db.execute<{ problem: string }>(sql.raw(`
    with kept as (
      select course_key, cohorts, roles, sum(learners) as learners, sum(earned) as earned, sum(possible) as possible,
        sum(with_possible) as with_possible, sum(percent) as percent
      from completion.course_stat_sums group by course_key, cohorts, roles
      having sum(learners) <> 0 or sum(earned) <> 0 or sum(possible) <> 0 or sum(with_possible) <> 0 or sum(percent) <> 0
    ), scanned as (
      select course_key, stat_cohorts as cohorts, stat_roles as roles, count(*)::numeric as learners,
        coalesce(sum(completion.exact_numeric(course_earned)), 0) as earned, coalesce(sum(completion.exact_numeric(course_possible)), 0) as possible,
        count(course_possible)::numeric as with_possible, coalesce(sum(completion.exact_numeric(course_percent)), 0) as percent
      from completion.enrollments where is_active group by course_key, stat_cohorts, stat_roles
    ), kept_buckets as (
      select course_key, bucket, sum(learners) as learners from completion.course_learner_buckets group by 1, 2 having sum(learners) <> 0
    ), scanned_buckets as (
      select course_key, learner_id >> 10 as bucket, count(*)::numeric as learners from completion.enrollments where is_active group by 1, 2
    )
    select 'sums of ' || coalesce(k.course_key, s.course_key) || ' ' || coalesce(k.cohorts, s.cohorts)::text || ' ' || coalesce(k.roles, s.roles)::text
      || ': kept ' || coalesce(row(k.learners, k.earned, k.possible, k.with_possible, k.percent)::text, 'none')
      || ', scanned ' || coalesce(row(s.learners, s.earned, s.possible, s.with_possible, s.percent)::text, 'none') as problem
    from kept k full join scanned s on s.course_key = k.course_key and s.cohorts = k.cohorts and s.roles = k.roles
    where row(k.learners, k.earned, k.possible, k.with_possible, k.percent) is distinct from row(s.learners, s.earned, s.possible, s.with_possible, s.percent)
    union all
    select 'buckets of ' || coalesce(k.course_key, s.course_key) || ' ' || coalesce(k.bucket, s.bucket) || ': kept ' || coalesce(k.learners::text, 'none') || ', scanned ' || coalesce(s.learners::text, 'none')
    from kept_buckets k full join scanned_buckets s on s.course_key = k.course_key and s.bucket = k.bucket
    where k.learners is distinct from s.learners
    union all
    select 'group of learner ' || e.learner_id || ' in ' || e.course_key || ': ' || row(e.stat_cohorts, e.stat_roles)::text
    from completion.enrollments e
    where e.stat_roles <> coalesce((select array_agg(r.role order by r.role collate "C") from completion.course_roles r
                                    where r.course_key = e.course_key and r.learner_id = e.learner_id), '{}')
       or e.stat_cohorts <> coalesce((select array_agg(m.cohort_id order by m.cohort_id) from completion.cohort_memberships m
                                      inner join completion.cohorts c on c.id = m.cohort_id
                                      where c.course_key = e.course_key and m.learner_id = e.learner_id), '{}')`));
  return result.rows.map((row) => row.problem);
}
