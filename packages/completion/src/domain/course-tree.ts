import type { BlockMode } from "./block-modes.js";

/** One block of a course as stored: the flat form that the tree is built from. */
export interface BlockRecord {
  readonly key: string;
  readonly type: string;
  readonly parentKey: string | null;
  readonly position: number;
  readonly mode: BlockMode;
  readonly visibleToStaffOnly: boolean;
}

/** A block in a course tree. */
export interface TreeNode extends BlockRecord {
  readonly children: TreeNode[];
  readonly parent: TreeNode | null;
}

/** A course's block tree with its outline order and a lookup by key. */
export interface CourseTree {
  readonly root: TreeNode;
  /** Every block in course outline order (pre-order). */
  readonly outline: readonly TreeNode[];
  readonly byKey: ReadonlyMap<string, TreeNode>;
}

/**
 * The deepest course tree accepted (the course block is level 1). Real
 * courses are 4 to 6 levels deep; the limit keeps the recursive walks over a
 * tree (aggregation, subtrees) far from the stack's limit.
 */
export const MAX_TREE_DEPTH = 100;

/** Why a set of block records does not form one tree. */
export class CourseTreeError extends Error {
  override readonly name = "CourseTreeError";
}

/**
 * Builds the tree of a course from its flat block records: exactly one root,
 * every parent present, no cycles; siblings ordered by `position`, then key.
 * Returns null for a course with no blocks (structure unknown).
 */
export function buildCourseTree(records: readonly BlockRecord[]): CourseTree | null {
  if (records.length === 0) return null;
  const nodes = new Map<string, { record: BlockRecord; children: BlockRecord[] }>();
  for (const record of records) {
    if (nodes.has(record.key)) throw new CourseTreeError(`Block ${record.key} appears twice.`);
    nodes.set(record.key, { record, children: [] });
  }
  const roots: BlockRecord[] = [];
  for (const record of records) {
    if (record.parentKey === null) {
      roots.push(record);
      continue;
    }
    const parent = nodes.get(record.parentKey);
    if (!parent) throw new CourseTreeError(`Block ${record.key} names a parent that does not exist: ${record.parentKey}.`);
    parent.children.push(record);
  }
  if (roots.length !== 1) throw new CourseTreeError(`A course tree needs exactly one root block; found ${roots.length}.`);

  const outline: TreeNode[] = [];
  const byKey = new Map<string, TreeNode>();
  const root: TreeNode = { ...roots[0]!, parent: null, children: [] };
  // Pre-order without recursion, so no stored tree can overflow the stack.
  const pending: TreeNode[] = [root];
  while (pending.length > 0) {
    const node = pending.pop()!;
    outline.push(node);
    byKey.set(node.key, node);
    const ordered = [...nodes.get(node.key)!.children].sort(bySiblingOrder);
    for (const record of ordered) node.children.push({ ...record, parent: node, children: [] });
    for (let index = node.children.length - 1; index >= 0; index -= 1) pending.push(node.children[index]!);
  }
  if (outline.length !== records.length) throw new CourseTreeError("The course tree has a cycle.");
  return { root, outline, byKey };
}

function bySiblingOrder(a: BlockRecord, b: BlockRecord): number {
  return a.position - b.position || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/** The block and every block above it, nearest first. */
export function selfAndAncestors(node: TreeNode): TreeNode[] {
  const chain: TreeNode[] = [];
  for (let current: TreeNode | null = node; current; current = current.parent) chain.push(current);
  return chain;
}

/** The blocks of a subtree in outline order, the subtree root first. */
export function subtreeOutline(node: TreeNode): TreeNode[] {
  const result: TreeNode[] = [];
  const pending: TreeNode[] = [node];
  while (pending.length > 0) {
    const current = pending.pop()!;
    result.push(current);
    for (let index = current.children.length - 1; index >= 0; index -= 1) pending.push(current.children[index]!);
  }
  return result;
}
