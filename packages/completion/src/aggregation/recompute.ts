import type { Queryable } from "../db/database.js";
import type { CourseStructure } from "../domain/course-structures.js";
import { selfAndAncestors, type TreeNode } from "../domain/course-tree.js";
import { deleteAggregates, upsertAggregates, type AggregateRow } from "../repositories/aggregates.js";
import { loadLearnerCompletions } from "../repositories/completions.js";
import { setEnrollmentCourseProgress } from "../repositories/enrollments.js";
import { aggregateTree } from "./aggregate-tree.js";
import { percentOf } from "./completion-math.js";

/** Which stored aggregates to rewrite: all of them, or those above some blocks. */
export type RecomputeScope = { readonly all: true } | { readonly changedBlocks: readonly string[] };

/**
 * Recomputes a learner's aggregates in a course from their block completions
 * and stores those of the configured aggregator types. With `changedBlocks`
 * only the ancestors of those blocks are written; with `all` every stored
 * aggregate of the learner in the course is replaced.
 */
export async function recomputeAggregates(
  q: Queryable,
  structure: CourseStructure,
  aggregatorTypes: ReadonlySet<string>,
  learnerId: number,
  scope: RecomputeScope,
  now: Date,
): Promise<void> {
  const { tree } = structure;
  const courseKey = structure.course.key;
  if (!tree) {
    if ("all" in scope) {
      await deleteAggregates(q, learnerId, courseKey);
      await setEnrollmentCourseProgress(q, learnerId, courseKey, null);
    }
    return;
  }
  const progress = aggregateTree(tree, await loadLearnerCompletions(q, learnerId, courseKey));

  let targets: TreeNode[];
  if ("all" in scope) {
    targets = tree.outline.filter((node) => aggregatorTypes.has(node.type));
  } else {
    const seen = new Set<string>();
    targets = [];
    for (const key of scope.changedBlocks) {
      const node = tree.byKey.get(key);
      if (!node) continue;
      for (const ancestor of selfAndAncestors(node)) {
        if (seen.has(ancestor.key) || !aggregatorTypes.has(ancestor.type)) continue;
        seen.add(ancestor.key);
        targets.push(ancestor);
      }
    }
  }
  const rows: AggregateRow[] = targets.map((node) => {
    const blockProgress = progress.get(node.key)!;
    return {
      blockKey: node.key,
      aggregationName: node.type,
      earned: blockProgress.earned,
      possible: blockProgress.possible,
      percent: percentOf(blockProgress),
    };
  });
  if ("all" in scope) await deleteAggregates(q, learnerId, courseKey);
  await upsertAggregates(q, learnerId, courseKey, rows, now);
  // The course is an ancestor of every block, so its progress changes with any of them.
  const course = progress.get(tree.root.key)!;
  await setEnrollmentCourseProgress(q, learnerId, courseKey, { ...course, percent: percentOf(course) });
}
