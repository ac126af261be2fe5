import { sql } from "drizzle-orm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveStaleRecords } from "../../src/aggregation/stale.js";
import type { BulkBlock } from "../../src/ingest/bulk-format.js";
import { readCourseStats } from "../../src/read/course-stats.js";
import { block, COURSE, COURSE_TREE, load, OTHER_COURSE, OTHER_TREE } from "../support/data.js";
import { courseSumsMismatches } from "../support/consistency.js";
import { useHarness } from "../support/harness.js";
import { activeLearnersPageByScan, courseStatsSumsByScan, meanCoursePercentByScan } from "../support/stats-by-scan.js";

const h = await useHarness();
const staff = (await h.signon.tokenFor("stats-staff@example.com", ["staff"])).token;

// Learner ids spread over several buckets of 1,024 ids, so deep pages start inside a bucket.
const IDS = [1, 2, 3, 700, 1023, 1024, 1025, 2047, 2048, 5000, 5001, 9999];
const username = (id: number): string => `l${id}`;
const ROLES = ["staff", "beta_testers", "instructor"];
const COMPLETABLE = ["p1", "h1", "p2", "vid1"].map((id) => block(id.startsWith("p") ? "problem" : id === "h1" ? "html" : "video", id));
/** The course re-imported with one more problem (possible 5), or with p2's vertical gone (possible 3). */
const TREES: BulkBlock[] = [
  COURSE_TREE,
  { ...COURSE_TREE, children: [...(COURSE_TREE.children ?? []), { type: "chapter", id: "ch3", children: [{ type: "problem", id: "p9" }] }] },
  {
    ...COURSE_TREE,
    children: (COURSE_TREE.children ?? []).map((chapter) =>
      chapter.id !== "ch1" ? chapter : { ...chapter, children: [{ type: "sequential", id: "s1", children: [{ type: "vertical", id: "v1", children: [{ type: "problem", id: "p1" }] }] }] },
    ),
  },
];

type Step =
  | { kind: "batch"; learner: number; blocks: [number, number][] }
  | { kind: "enroll"; learner: number; course: 0 | 1; active: boolean }
  | { kind: "role"; learner: number; role: number; course: 0 | 1 }
  | { kind: "unrole"; learner: number }
  | { kind: "cohort"; cohort: number; course: 0 | 1; members: number[] }
  | { kind: "dropCohort"; cohort: number }
  | { kind: "reimport"; tree: number }
  | { kind: "reaggregate" }
  | { kind: "forget"; learner: number };

const learner = fc.integer({ min: 0, max: IDS.length - 1 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("batch" as const), learner, blocks: fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 1, maxLength: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("enroll" as const), learner, course: fc.constantFrom(0 as const, 1 as const), active: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("role" as const), learner, role: fc.integer({ min: 0, max: ROLES.length - 1 }), course: fc.constantFrom(0 as const, 1 as const) }) },
  fc.record({ kind: fc.constant("unrole" as const), learner }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("cohort" as const), cohort: fc.integer({ min: 10, max: 12 }), course: fc.constantFrom(0 as const, 1 as const), members: fc.uniqueArray(learner, { maxLength: 6 }) }) },
  fc.record({ kind: fc.constant("dropCohort" as const), cohort: fc.integer({ min: 10, max: 12 }) }),
  fc.record({ kind: fc.constant("reimport" as const), tree: fc.integer({ min: 0, max: TREES.length - 1 }) }),
  fc.record({ kind: fc.constant("reaggregate" as const) }),
  fc.record({ kind: fc.constant("forget" as const), learner }),
);

async function start(): Promise<void> {
  await h.emptyCompletion();
  await load(h.ctx, {
    courses: [
      { course_key: COURSE, structure: COURSE_TREE },
      { course_key: OTHER_COURSE, structure: OTHER_TREE },
    ],
    users: IDS.map((id) => ({ id, username: username(id), email: `${username(id)}@example.com` })),
    enrollments: IDS.filter((_, at) => at % 4 !== 3).map((id) => ({ username: username(id), course_key: COURSE })),
  });
}

async function apply(change: Step): Promise<void> {
  const course = (which: 0 | 1): string => (which === 0 ? COURSE : OTHER_COURSE);
  switch (change.kind) {
    case "batch": {
      const blocks = Object.fromEntries(change.blocks.map(([at, value]) => [COMPLETABLE[at]!, value]));
      // Refused (400) when the learner is not actively enrolled or the block left the tree: nothing is stored then.
      await h.app.inject({
        method: "POST",
        url: "/api/completion/v1/completion-batch",
        headers: { authorization: `Bearer ${staff}` },
        payload: { username: username(IDS[change.learner]!), course_key: COURSE, blocks },
      });
      return;
    }
    case "enroll":
      await load(h.ctx, { enrollments: [{ username: username(IDS[change.learner]!), course_key: course(change.course), is_active: change.active }] });
      return;
    case "role":
      await load(h.ctx, { roles: [{ username: username(IDS[change.learner]!), course_key: course(change.course), role: ROLES[change.role]! }] });
      return;
    case "unrole":
      // No API takes a role away; the stored row can still go (by hand, or with its learner).
      await h.ctx.db.execute(sql`delete from completion.course_roles where learner_id = ${IDS[change.learner]!}`);
      return;
    case "cohort":
      await load(h.ctx, { cohorts: [{ id: change.cohort, course_key: course(change.course), name: `cohort ${change.cohort}`, members: change.members.map((at) => username(IDS[at]!)) }] });
      return;
    case "dropCohort":
      await h.ctx.db.execute(sql`delete from completion.cohorts where id = ${change.cohort}`);
      return;
    case "reimport":
      await load(h.ctx, { courses: [{ course_key: COURSE, structure: TREES[change.tree]! }] });
      return;
    case "reaggregate":
      await resolveStaleRecords(h.ctx.db, h.ctx.structures, h.ctx.settings, 5, h.ctx.now);
      return;
    case "forget":
      await h.ctx.db.execute(sql`delete from completion.learners where id = ${IDS[change.learner]!}`);
      return;
  }
}

const FILTERS = [
  { cohortId: null, excludeRoles: [] },
  { cohortId: 10, excludeRoles: [] },
  { cohortId: 11, excludeRoles: [] },
  { cohortId: null, excludeRoles: ["staff"] },
  { cohortId: null, excludeRoles: ["staff", "beta_testers"] },
  { cohortId: 10, excludeRoles: ["instructor", "staff"] },
  { cohortId: 12, excludeRoles: ["beta_testers"] },
];

function statsUrl(filters: { cohortId: number | null; excludeRoles: readonly string[] }): string {
  const query = [filters.cohortId === null ? null : `cohorts=${filters.cohortId}`, filters.excludeRoles.length === 0 ? null : `exclude_roles=${filters.excludeRoles.join(",")}`];
  return `/api/completion/v1/stats/${COURSE}/?${query.filter((part) => part !== null).join("&")}`;
}

/** What the service answers now, next to what a scan of the enrollments gives. */
async function compare(pageSize: number): Promise<{ actual: string[]; expected: string[] }> {
  const actual: string[] = [];
  const expected: string[] = [];
  const structure = (await h.ctx.structures.get(h.ctx.db, COURSE))!;
  for (const filters of FILTERS) {
    const response = await h.app.inject({ method: "GET", url: statsUrl(filters), headers: { authorization: `Bearer ${staff}` } });
    const body = response.json() as { results?: { mean_completion: unknown }[] };
    actual.push(`${statsUrl(filters)} ${JSON.stringify(body.results?.[0]?.mean_completion ?? body)}`);
    const byScan = await readCourseStats(h.ctx, structure, filters, true, (courseKey, selected) => courseStatsSumsByScan(h.ctx, courseKey, selected));
    expected.push(`${statsUrl(filters)} ${JSON.stringify(byScan)}`);
  }
  const total = (await activeLearnersPageByScan(h.ctx, COURSE, 0, 0)).count;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  for (let page = 1; page <= pages; page += 1) {
    const response = await h.app.inject({
      method: "GET",
      url: `/api/completion/v1/course/${COURSE}/?page=${page}&page_size=${pageSize}&requested_fields=mean`,
      headers: { authorization: `Bearer ${staff}` },
    });
    const body = response.json() as { count: number; results?: { username: string; mean: number }[] };
    actual.push(`page ${page}: ${body.count} ${JSON.stringify(body.results?.map((item) => [item.username, item.mean]) ?? body)}`);
    const byScan = await activeLearnersPageByScan(h.ctx, COURSE, (page - 1) * pageSize, pageSize);
    const mean = await meanCoursePercentByScan(h.ctx, COURSE);
    expected.push(`page ${page}: ${byScan.count} ${JSON.stringify(byScan.ids.map((id) => [username(id), mean]))}`);
  }
  return { actual, expected };
}

describe("GET /api/completion/v1/stats/{course_key}/ and the all-users pages, from the kept sums", () => {
  it("answer what a scan of the enrollments gives, after any mix of batches, enrollment, role and cohort changes, re-imports and deletions", { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(step, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 4 }), async (rounds, pageSize) => {
        await start();
        for (const round of rounds) {
          for (const change of round) await apply(change);
          const { actual, expected } = await compare(pageSize);
          expect(actual).toEqual(expected);
          expect(await courseSumsMismatches(h.ctx)).toEqual([]);
        }
      }),
      { numRuns: Number(process.env.STATS_RUNS ?? 25), seed: process.env.STATS_SEED === undefined ? 20_261_126 : Number(process.env.STATS_SEED) },
    );
  });

  it("answer the same while batches for one course run side by side", async () => {
    await start();
    const values = IDS.map((id, at) => ({ id, value: (at + 1) / 13 }));
    await Promise.all(
      values.map(({ id, value }) =>
        h.app.inject({
          method: "POST",
          url: "/api/completion/v1/completion-batch",
          headers: { authorization: `Bearer ${staff}` },
          payload: { username: username(id), course_key: COURSE, blocks: { [COMPLETABLE[0]!]: value, [COMPLETABLE[2]!]: 1 - value } },
        }),
      ),
    );
    const { actual, expected } = await compare(3);
    expect(actual).toEqual(expected);
  });
});
