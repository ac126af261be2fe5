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
  // Without recursion: which blocks count nothing, top-down in outline order (a completable block's subtree never
  // counts), then progress bottom-up in reverse outline order, where every child comes before its parent.
  const out = new Set<TreeNode>();
  for (const node of tree.outline) {
    const parent = node.parent;
    const excludedFromAbove = parent !== null && (out.has(parent) || parent.mode === "completable");
    if (excludedFromAbove || node.mode === "excluded" || node.visibleToStaffOnly) out.add(node);
  }
  const result = new Map<string, Progress>();
  for (let index = tree.outline.length - 1; index >= 0; index -= 1) {
    const node = tree.outline[index]!;
    if (out.has(node)) {
      result.set(node.key, NOTHING);
    } else if (node.mode === "completable") {
      result.set(node.key, { earned: completions.get(node.key) ?? 0, possible: 1 });
    } else {
      let earned = 0;
      let possible = 0;
      for (const child of node.children) {
        const childProgress = result.get(child.key)!;
        earned += childProgress.earned;
        possible += childProgress.possible;
      }
      result.set(node.key, { earned, possible });
    }
  }
  return result;
}

/**
 * How many completable blocks a learner can see in the tree: the course-level
 * `possible` (blocks under an excluded or staff-only block do not count).
 */
export function visibleCompletableBlocks(tree: CourseTree): number {
  return aggregateTree(tree, new Map()).get(tree.root.key)?.possible ?? 0;
}
