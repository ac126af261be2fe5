import type { CourseTree, TreeNode } from "../domain/course-tree.js";
import type { Progress } from "./completion-math.js";

const NOTHING: Progress = Object.freeze({ earned: 0, possible: 0 });

/**
 * Computes every block's progress for one learner (C16): a completable block
 * earns its completion value (0 when absent) out of 1; an aggregator sums its
 * children; an excluded block, and a block visible to staff only, counts 0 of
 * 0 together with its whole subtree. Children are summed in outline order so
 * the same inputs always give the same doubles.
 */
export function aggregateTree(tree: CourseTree, completions: ReadonlyMap<string, number>): Map<string, Progress> {
  const result = new Map<string, Progress>();
  const visit = (node: TreeNode, excluded: boolean): Progress => {
    const out = excluded || node.mode === "excluded" || node.visibleToStaffOnly;
    let progress: Progress;
    if (node.mode === "completable" && !out) {
      progress = { earned: completions.get(node.key) ?? 0, possible: 1 };
      for (const child of node.children) visit(child, true);
    } else {
      let earned = 0;
      let possible = 0;
      for (const child of node.children) {
        const childProgress = visit(child, out);
        earned += childProgress.earned;
        possible += childProgress.possible;
      }
      progress = out ? NOTHING : { earned, possible };
    }
    result.set(node.key, progress);
    return progress;
  };
  visit(tree.root, false);
  return result;
}

/**
 * How many completable blocks a learner can see in the tree: the course-level
 * `possible` (blocks under an excluded or staff-only block do not count).
 */
export function visibleCompletableBlocks(tree: CourseTree): number {
  return aggregateTree(tree, new Map()).get(tree.root.key)?.possible ?? 0;
}
