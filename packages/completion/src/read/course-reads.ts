import { isDatabaseUnavailable } from "@tessera/db/faults";
import type { CompletionContext } from "../context.js";
import { refreshStaleLearner } from "../aggregation/stale.js";
import type { CourseStructure } from "../domain/course-structures.js";
import type { TreeNode } from "../domain/course-tree.js";
import type { PageRequest, PageWindow } from "../http/paging.js";
import { pageWindow } from "../http/paging.js";
import { loadAggregates } from "../repositories/aggregates.js";
import { countActiveLearnersFromSums, meanCoursePercent } from "../repositories/course-sums.js";
import { countActiveCourses, countActiveLearners, listActiveCourses } from "../repositories/enrollments.js";
import { findLearnerInCourse, findLearnerInCourses, pageActiveLearners, type LearnerInCourse } from "../repositories/learner-reads.js";
import { itemShape, type ItemShape, type RequestedFields } from "./course-items.js";
import { itemJson, type JsonPiece } from "./item-json.js";
import { progressFromCompletions, storedCovers } from "./progress-source.js";

/** A page of items (each the JSON bytes of a course item), or null when the page lies beyond the last one. */
export type ItemPage = { window: PageWindow; items: JsonPiece[] } | null;

/** What a read returns when the cached tree it used is not the stored one: the caller reloads and reads again. */
export const STALE_STRUCTURE = "stale-structure";

/** C13: the mean course percent, for items that asked for `mean`. */
export async function courseMean(ctx: CompletionContext, structure: CourseStructure): Promise<number> {
  return structure.tree ? meanCoursePercent(ctx.statements, structure.course.key) : 0;
}

/** What stored aggregates give a shape (see {@link storedKeys}), per aggregator type set, then per shape. */
const storedUseOf = new WeakMap<ReadonlySet<string>, WeakMap<ItemShape, { covers: boolean; keys: string[] | "all" }>>();

/** Whether stored aggregates cover a shape, and {@link storedKeys}; worked out once per shape. */
function storedUse(ctx: CompletionContext, structure: CourseStructure, shape: ItemShape): { covers: boolean; keys: string[] | "all" } {
  const types = ctx.settings.aggregatorTypes;
  let byShape = storedUseOf.get(types);
  if (!byShape) {
    byShape = new WeakMap();
    storedUseOf.set(types, byShape);
  }
  let use = byShape.get(shape);
  if (use === undefined) {
    const covers = storedCovers(shape.needed, types);
    const storedCount = structure.tree?.outline.filter((node) => types.has(node.type)).length ?? 0;
    const keys = !covers ? [] : shape.needed.length === storedCount ? "all" : shape.needed.map((node) => node.key);
    use = { covers, keys };
    byShape.set(shape, use);
  }
  return use;
}

/**
 * The keys whose stored aggregates a shape can use: none when stored rows do
 * not cover it, `"all"` when it needs every stored block of the course (the
 * query then needs no key list).
 */
function storedKeys(ctx: CompletionContext, structure: CourseStructure, shape: ItemShape): string[] | "all" {
  return storedUse(ctx, structure, shape).keys;
}

/** A learner's state in a course (enrollment, staleness, the stored aggregates the shape needs); null for an unknown username. */
export function findLearnerForShape(ctx: CompletionContext, structure: CourseStructure, shape: ItemShape, username: string): Promise<LearnerInCourse | null> {
  return findLearnerInCourse(ctx.statements, username, structure.course.key, storedKeys(ctx, structure, shape));
}

/**
 * One learner in one course (single-user reads): stale aggregates are
 * recomputed and stored first (C14), then the item is written (JSON bytes).
 */
export async function readLearnerInCourse(
  ctx: CompletionContext,
  structure: CourseStructure,
  learner: LearnerInCourse,
  fields: RequestedFields,
  root: TreeNode | null,
): Promise<JsonPiece> {
  let shape = itemShape(structure, fields.types, root);
  let stored = learner.aggregates;
  let fromCompletions = !storedUse(ctx, structure, shape).covers;
  let refreshed = false;
  if (learner.stale) {
    try {
      refreshed = await refreshStaleLearner(ctx.primary, ctx.structures, ctx.settings, learner, structure.course.key, ctx.now());
    } catch (error) {
      // Read on a replica while the primary is away (a failover): the figures the refresh would store, computed here.
      if (ctx.db === ctx.primary || !isDatabaseUnavailable(error)) throw error;
      fromCompletions = true;
    }
  }
  if (refreshed) {
    // What follows the refresh reads the primary it wrote to.
    structure = await ctx.structures.forCourse(ctx.primary, structure.course);
    const sameRoot = root === null ? null : (structure.tree?.byKey.get(root.key) ?? null);
    shape = itemShape(structure, fields.types, sameRoot);
    fromCompletions = !storedUse(ctx, structure, shape).covers;
    const keys = fromCompletions ? [] : shape.needed.map((node) => node.key);
    const reread = await loadAggregates(ctx.primary, structure.course.key, [learner.id], keys);
    stored = reread.get(learner.id) ?? new Map();
  }
  // Stored figures are read by block key, and a block without a stored row has completed nothing.
  const progress = fromCompletions ? (await progressFromCompletions(refreshed ? ctx.primary : ctx.db, structure, [learner.id])).get(learner.id) : stored;
  const extras: { username?: string; mean?: number } = {};
  if (fields.username) extras.username = learner.username;
  if (fields.mean) extras.mean = await courseMean(ctx, structure);
  return itemJson(structure, shape, progress, extras);
}

/** All active learners of a course (staff detail view), by learner id, from stored aggregates only (C11, C14). */
export async function readAllLearners(
  ctx: CompletionContext,
  structure: CourseStructure,
  userIds: readonly number[] | null,
  fields: RequestedFields,
  root: TreeNode | null,
  page: PageRequest,
): Promise<ItemPage | typeof STALE_STRUCTURE> {
  const shape = itemShape(structure, fields.types, root);
  const start = (page.page - 1) * page.pageSize;
  const found = await pageActiveLearners(ctx.statements, structure.course.key, userIds, start, page.pageSize, storedKeys(ctx, structure, shape));
  if (found.total !== null && found.courseHash !== structure.course.structureHash) return STALE_STRUCTURE;
  const count =
    found.total ??
    (userIds === null ? await countActiveLearnersFromSums(ctx.statements, structure.course.key) : await countActiveLearners(ctx.db, structure.course.key, userIds));
  const window = pageWindow(page, count);
  if (!window) return null;
  const computed = storedUse(ctx, structure, shape).covers
    ? null
    : await progressFromCompletions(
        ctx.db,
        structure,
        found.learners.map((learner) => learner.id),
      );
  const mean = fields.mean ? await courseMean(ctx, structure) : undefined;
  const items = found.learners.map((learner) => {
    const progress = computed ? computed.get(learner.id) : learner.aggregates;
    return itemJson(structure, shape, progress, mean === undefined ? { username: learner.username } : { username: learner.username, mean });
  });
  return { window, items };
}

/**
 * One learner's active courses (list view), by course key: the page's
 * courses, then the learner's state in all of them in one query; stale
 * aggregates are recomputed first, course by course.
 */
export async function readLearnerCourses(
  ctx: CompletionContext,
  username: string,
  learnerId: number,
  mobileOnly: boolean,
  fields: RequestedFields,
  page: PageRequest,
): Promise<ItemPage> {
  const count = await countActiveCourses(ctx.db, learnerId, mobileOnly);
  const window = pageWindow(page, count);
  if (!window) return null;
  const courses = await listActiveCourses(ctx.db, learnerId, mobileOnly, window.start, window.limit);
  // The course rows were just read, so these trees are current.
  const structures: CourseStructure[] = [];
  for (const course of courses) structures.push(await ctx.structures.forCourse(ctx.db, course));
  const wanted = structures.map((structure) => storedKeys(ctx, structure, itemShape(structure, fields.types, null)));
  const blockKeys = wanted.every((keys) => keys === "all") ? "all" : wanted.flatMap((keys, at) => (keys === "all" ? allStoredKeys(ctx, structures[at]!) : keys));
  const learners = await findLearnerInCourses(
    ctx.statements,
    username,
    structures.map((structure) => structure.course.key),
    blockKeys,
  );
  const items: JsonPiece[] = [];
  for (const structure of structures) {
    const learner = learners.get(structure.course.key);
    if (learner) items.push(await readLearnerInCourse(ctx, structure, learner, fields, null));
  }
  return { window, items };
}

/** The keys of every stored block of a course. */
function allStoredKeys(ctx: CompletionContext, structure: CourseStructure): string[] {
  return (structure.tree?.outline ?? []).filter((node) => ctx.settings.aggregatorTypes.has(node.type)).map((node) => node.key);
}
