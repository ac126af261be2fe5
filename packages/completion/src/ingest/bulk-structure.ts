import { createHash } from "node:crypto";
import { visibleCompletableBlocks } from "../aggregation/aggregate-tree.js";
import { blockMode } from "../domain/block-modes.js";
import { buildCourseTree } from "../domain/course-tree.js";
import { blockKeyIn, type CourseKey } from "../domain/keys.js";
import type { BlockRow } from "../repositories/courses.js";
import type { BulkBlock } from "./bulk-format.js";

/**
 * Flattens a bulk-format block tree into block rows of a course: keys in the
 * course's canonical form, positions among siblings, modes per C16. Throws a
 * CourseTreeError when the rows do not make one tree (a block twice).
 */
export function flattenStructure(course: CourseKey, root: BulkBlock): BlockRow[] {
  const rows: BlockRow[] = [];
  const visit = (block: BulkBlock, parentKey: string | null, position: number): void => {
    const key = blockKeyIn(course, block.type, block.id);
    rows.push({
      key,
      type: block.type,
      parentKey,
      position,
      mode: blockMode(block.type, block.mode),
      visibleToStaffOnly: block.visible_to_staff_only ?? false,
      displayName: block.display_name ?? null,
      start: block.start ? new Date(block.start) : null,
    });
    (block.children ?? []).forEach((child, index) => visit(child, key, index));
  };
  visit(root, null, 0);
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
