import type { Queryable } from "../db/database.js";
import { aggregateTree } from "../aggregation/aggregate-tree.js";
import type { Progress } from "../aggregation/completion-math.js";
import type { CourseStructure } from "../domain/course-structures.js";
import type { TreeNode } from "../domain/course-tree.js";
import { loadAggregates } from "../repositories/aggregates.js";
import { loadCompletionsOf } from "../repositories/completions.js";

/** Progress of each learner in the given blocks, by learner id then block key. */
export type LearnerProgress = Map<number, ReadonlyMap<string, Progress>>;

/**
 * The progress that reads report for some learners and blocks. Blocks of
 * stored aggregator types come from the stored aggregates (a learner without a
 * row has completed nothing there); any other block (a `root_block` of a type
 * that is not stored) is computed from block completions.
 */
export async function loadProgress(
  q: Queryable,
  structure: CourseStructure,
  aggregatorTypes: ReadonlySet<string>,
  learnerIds: readonly number[],
  blocks: readonly TreeNode[],
): Promise<LearnerProgress> {
  const result: LearnerProgress = new Map();
  const { tree } = structure;
  if (!tree) return result;
  if (blocks.every((node) => aggregatorTypes.has(node.type))) {
    const keys = blocks.map((node) => node.key);
    const stored = await loadAggregates(q, structure.course.key, learnerIds, keys);
    for (const id of learnerIds) {
      const rows = stored.get(id);
      const progress = new Map<string, Progress>();
      for (const key of keys) {
        const row = rows?.get(key);
        progress.set(key, row ? { earned: row.earned, possible: row.possible } : structure.noProgress.get(key)!);
      }
      result.set(id, progress);
    }
    return result;
  }
  const completions = await loadCompletionsOf(q, learnerIds, structure.course.key);
  for (const id of learnerIds) result.set(id, aggregateTree(tree, completions.get(id) ?? new Map()));
  return result;
}
