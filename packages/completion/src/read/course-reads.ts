import type { CompletionContext } from "../context.js";
import { refreshStaleLearner } from "../aggregation/stale.js";
import type { CourseStructure } from "../domain/course-structures.js";
import type { TreeNode } from "../domain/course-tree.js";
import type { PageRequest, PageWindow } from "../http/paging.js";
import { pageWindow } from "../http/paging.js";
import { meanCoursePercent } from "../repositories/aggregates.js";
import { countActiveCourses, countActiveLearners, listActiveCourses, listActiveLearners } from "../repositories/enrollments.js";
import { buildItem, itemShape, type CourseItem, type RequestedFields } from "./course-items.js";
import { loadProgress } from "./progress-source.js";

/** A page of items, or null when the page lies beyond the last one. */
export type ItemPage = { window: PageWindow; items: CourseItem[] } | null;

/** C13: the mean course percent, for items that asked for `mean`. */
export async function courseMean(ctx: CompletionContext, structure: CourseStructure): Promise<number> {
  return meanCoursePercent(ctx.db, structure.course.key, structure.tree?.root.key ?? null);
}

/**
 * One learner in one course (detail view, single user): stale aggregates are
 * recomputed and stored first (C14), then the item is read.
 */
export async function readLearnerInCourse(
  ctx: CompletionContext,
  structure: CourseStructure,
  learner: { id: number; username: string },
  fields: RequestedFields,
  root: TreeNode | null,
): Promise<CourseItem> {
  if (await refreshStaleLearner(ctx.db, ctx.structures, ctx.settings, learner, structure.course.key, ctx.now())) {
    structure = await ctx.structures.forCourse(ctx.db, structure.course);
  }
  const shape = itemShape(structure, fields.types, root);
  const progress = await loadProgress(ctx.db, structure, ctx.settings.aggregatorTypes, [learner.id], shape.needed);
  const extras: { username?: string; mean?: number } = {};
  if (fields.username) extras.username = learner.username;
  if (fields.mean) extras.mean = await courseMean(ctx, structure);
  return buildItem(structure, shape, progress.get(learner.id), extras);
}

/** All active learners of a course (staff detail view), by learner id, from stored aggregates only (C11, C14). */
export async function readAllLearners(
  ctx: CompletionContext,
  structure: CourseStructure,
  userIds: readonly number[] | null,
  fields: RequestedFields,
  root: TreeNode | null,
  page: PageRequest,
): Promise<ItemPage> {
  const count = await countActiveLearners(ctx.db, structure.course.key, userIds);
  const window = pageWindow(page, count);
  if (!window) return null;
  const learners = await listActiveLearners(ctx.db, structure.course.key, userIds, window.start, window.limit);
  const shape = itemShape(structure, fields.types, root);
  const progress = await loadProgress(
    ctx.db,
    structure,
    ctx.settings.aggregatorTypes,
    learners.map((learner) => learner.id),
    shape.needed,
  );
  const mean = fields.mean ? await courseMean(ctx, structure) : undefined;
  const items = learners.map((learner) =>
    buildItem(structure, shape, progress.get(learner.id), mean === undefined ? { username: learner.username } : { username: learner.username, mean }),
  );
  return { window, items };
}

/** One learner's active courses (list view), by course key; stale aggregates are recomputed first. */
export async function readLearnerCourses(
  ctx: CompletionContext,
  learner: { id: number; username: string },
  mobileOnly: boolean,
  fields: RequestedFields,
  page: PageRequest,
): Promise<ItemPage> {
  const count = await countActiveCourses(ctx.db, learner.id, mobileOnly);
  const window = pageWindow(page, count);
  if (!window) return null;
  const courses = await listActiveCourses(ctx.db, learner.id, mobileOnly, window.start, window.limit);
  const items: CourseItem[] = [];
  for (const course of courses) {
    const structure = await ctx.structures.forCourse(ctx.db, course);
    items.push(await readLearnerInCourse(ctx, structure, learner, fields, null));
  }
  return { window, items };
}
