/** A block of the bulk-load format's course tree. */
export interface TreeBlock {
  type: string;
  id: string;
  children?: TreeBlock[];
}

/** A stored aggregate row as the test reads it. */
export interface AggregateRow {
  block_key: string;
  aggregation_name: string;
  earned: number;
  possible: number;
  percent: number;
}

/** A course of 3 chapters × 2 sequentials × 2 verticals × 4 problems (48 completable blocks). */
export function learningTree(): TreeBlock {
  const range = (count: number) => Array.from({ length: count }, (_, n) => n + 1);
  return {
    type: "course",
    id: "course",
    children: range(3).map((c) => ({
      type: "chapter",
      id: `ch${c}`,
      children: range(2).map((s) => ({
        type: "sequential",
        id: `ch${c}-seq${s}`,
        children: range(2).map((v) => ({
          type: "vertical",
          id: `ch${c}-seq${s}-v${v}`,
          children: range(4).map((p) => ({ type: "problem", id: `ch${c}-seq${s}-v${v}-p${p}` })),
        })),
      })),
    })),
  };
}

/** The block key of `block` in a `course-v1:` course. */
export function blockKey(courseKey: string, block: TreeBlock): string {
  return `block-v1:${courseKey.slice("course-v1:".length)}+type@${block.type}+block@${block.id}`;
}

/** The completable blocks of a tree, in outline order. */
export function leaves(block: TreeBlock): TreeBlock[] {
  return block.children ? block.children.flatMap(leaves) : [block];
}

/**
 * Every container's aggregate computed from scratch, independently of the
 * service's code: a container earns the sum of its problems' completions
 * (0 when absent) out of its number of problems. Sorted by block key.
 */
export function expectedAggregates(courseKey: string, tree: TreeBlock, completions: ReadonlyMap<string, number>): AggregateRow[] {
  const rows: AggregateRow[] = [];
  const visit = (block: TreeBlock): void => {
    if (!block.children) return;
    const problems = leaves(block);
    const earned = problems.reduce((sum, problem) => sum + (completions.get(blockKey(courseKey, problem)) ?? 0), 0);
    rows.push({ block_key: blockKey(courseKey, block), aggregation_name: block.type, earned, possible: problems.length, percent: earned / problems.length });
    block.children.forEach(visit);
  };
  visit(tree);
  return rows.sort((a, b) => (a.block_key < b.block_key ? -1 : a.block_key > b.block_key ? 1 : 0));
}
