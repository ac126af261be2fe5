import type { CompletionDictionary } from "../aggregation/completion-math.js";
import type { CourseStructure } from "../domain/course-structures.js";
import { subtreeOutline, type TreeNode } from "../domain/course-tree.js";

/** What a read asks for beyond the course-level completion (C8). */
export interface RequestedFields {
  /** Aggregator types whose block lists to include, in the order asked. */
  readonly types: readonly string[];
  readonly mean: boolean;
  readonly username: boolean;
}

/** A block entry (C3). */
export interface BlockEntry {
  course_key: string;
  block_key: string;
  usage_key: string;
  completion: CompletionDictionary;
}

/** A course completion item as sent. */
export type CourseItem = {
  course_key: string;
  completion: CompletionDictionary;
  username?: string;
  mean?: number;
} & { [aggregatorType: string]: unknown };

/** The blocks an item reports: its root and, per requested type, that type's blocks under the root in outline order. */
export interface ItemShape {
  readonly root: TreeNode | null;
  readonly lists: ReadonlyMap<string, readonly TreeNode[]>;
  /** Every block whose progress the item needs. */
  readonly needed: readonly TreeNode[];
}

/** Shapes already worked out, per cached structure (which never changes once built), by types and root. */
const shapes = new WeakMap<CourseStructure, Map<string, ItemShape>>();

/** Works out which blocks an item reports, under `root` (the course when null); remembered per structure. */
export function itemShape(structure: CourseStructure, types: readonly string[], root: TreeNode | null): ItemShape {
  let known = shapes.get(structure);
  if (!known) {
    known = new Map();
    shapes.set(structure, known);
  }
  const key = `${root?.key ?? ""} ${types.join(",")}`;
  let shape = known.get(key);
  if (!shape) {
    // Bounded by the course's blocks times the few type lists a client asks for; a hostile mix is capped.
    shape = computeItemShape(structure, types, root);
    if (known.size < 1000) known.set(key, shape);
  }
  return shape;
}

function computeItemShape(structure: CourseStructure, types: readonly string[], root: TreeNode | null): ItemShape {
  const tree = structure.tree;
  const top = root ?? tree?.root ?? null;
  const lists = new Map<string, TreeNode[]>(types.map((type) => [type, []]));
  if (!top) return { root: null, lists, needed: [] };
  const needed = new Map<string, TreeNode>([[top.key, top]]);
  if (types.length > 0) {
    for (const node of subtreeOutline(top)) {
      const list = lists.get(node.type);
      if (!list) continue;
      list.push(node);
      needed.set(node.key, node);
    }
  }
  return { root: top, lists, needed: [...needed.values()] };
}
