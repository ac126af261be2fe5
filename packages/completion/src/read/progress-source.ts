import type { Queryable } from "../db/database.js";
import { aggregateTree } from "../aggregation/aggregate-tree.js";
import type { Progress } from "../aggregation/completion-math.js";
import type { CourseStructure } from "../domain/course-structures.js";
import type { TreeNode } from "../domain/course-tree.js";
import { loadCompletionsOf } from "../repositories/completions.js";

/** Progress of each learner in the given blocks, by learner id then block key. */
export type LearnerProgress = Map<number, ReadonlyMap<string, Progress>>;

/** Whether stored aggregates cover every block (all of stored aggregator types). */
export function storedCovers(blocks: readonly TreeNode[], aggregatorTypes: ReadonlySet<string>): boolean {
  return blocks.every((node) => aggregatorTypes.has(node.type));
}

/**
 * Progress computed from block completions, for blocks that stored aggregates
 * do not cover (a `root_block` of a type that is not stored).
 */
export async function progressFromCompletions(q: Queryable, structure: CourseStructure, learnerIds: readonly number[]): Promise<LearnerProgress> {
  const result: LearnerProgress = new Map();
  const { tree } = structure;
  if (!tree) return result;
  const completions = await loadCompletionsOf(q, learnerIds, structure.course.key);
  for (const id of learnerIds) result.set(id, aggregateTree(tree, completions.get(id) ?? new Map()));
  return result;
}
