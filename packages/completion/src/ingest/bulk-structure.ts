import { createHash } from "node:crypto";
import { visibleCompletableBlocks } from "../aggregation/aggregate-tree.js";
import { blockMode } from "../domain/block-modes.js";
import { buildCourseTree, CourseTreeError, MAX_TREE_DEPTH } from "../domain/course-tree.js";
import { blockKeyIn, type CourseKey } from "../domain/keys.js";
import { parseTimestamp } from "../domain/timestamps.js";
import type { BlockRow } from "../repositories/courses.js";
import type { BulkBlock } from "./bulk-format.js";

/**
 * Flattens a bulk-format block tree into block rows of a course: keys in the
 * course's canonical form, positions among siblings, modes per C16. Throws a
 * CourseTreeError when the rows do not make one tree (a block twice), the
 * tree is deeper than {@link MAX_TREE_DEPTH} or a `start` is not an instant
 * the service stores. Walks without recursion, in outline order.
 */
export function flattenStructure(course: CourseKey, root: BulkBlock): BlockRow[] {
  const rows: BlockRow[] = [];
  const pending: { block: BulkBlock; parentKey: string | null; position: number; depth: number }[] = [{ block: root, parentKey: null, position: 0, depth: 1 }];
  while (pending.length > 0) {
    const { block, parentKey, position, depth } = pending.pop()!;
    const key = blockKeyIn(course, block.type, block.id);
    if (depth > MAX_TREE_DEPTH) throw new CourseTreeError(`Block ${key} lies more than ${MAX_TREE_DEPTH} levels deep.`);
    const start = block.start ? parseTimestamp(block.start) : null;
    if (block.start && !start) throw new CourseTreeError(`Block ${key}: start ${block.start} is not a date-time from year 0001 to 9999 (UTC).`);
    rows.push({
      key,
      type: block.type,
      parentKey,
      position,
      mode: blockMode(block.type, block.mode),
      visibleToStaffOnly: block.visible_to_staff_only ?? false,
      displayName: block.display_name ?? null,
      start,
    });
    const children = block.children ?? [];
    for (let index = children.length - 1; index >= 0; index -= 1) pending.push({ block: children[index]!, parentKey: key, position: index, depth: depth + 1 });
  }
  buildCourseTree(rows);
  return rows;
}

/** How many completable blocks a learner can see in the rows of one tree (its course-level `possible`). */
export function visibleCompletableCount(rows: readonly BlockRow[]): number {
  const tree = buildCourseTree(rows);
  return tree ? visibleCompletableBlocks(tree) : 0;
}

/** A digest of a structure, to tell a re-import of the same tree from a changed one. */
export function structureHash(rows: readonly BlockRow[]): string {
  const hash = createHash("sha256");
  for (const row of rows) {
    hash.update(
      JSON.stringify([row.key, row.type, row.parentKey, row.position, row.mode, row.visibleToStaffOnly, row.displayName, row.start?.toISOString() ?? null]),
    );
    hash.update("\n");
  }
  return hash.digest("hex");
}
