import { asc, eq, sql } from "drizzle-orm";
import type { BlockMode } from "../domain/block-modes.js";
import type { BlockRecord } from "../domain/course-tree.js";
import type { Queryable } from "../db/database.js";
import { blocks, courses } from "../db/schema.js";

/** A course as the read side needs it. */
export interface CourseRow {
  readonly key: string;
  readonly mobileAvailable: boolean;
  readonly structureVersion: number;
  /** Digest of the stored tree; null while the structure is unknown. */
  readonly structureHash: string | null;
}

/** A block row to store: a {@link BlockRecord} with its descriptive fields. */
export interface BlockRow extends BlockRecord {
  readonly displayName: string | null;
  readonly start: Date | null;
}

/** The columns of a {@link CourseRow}. */
export const courseColumns = {
  key: courses.key,
  mobileAvailable: courses.mobileAvailable,
  structureVersion: courses.structureVersion,
  structureHash: courses.structureHash,
};

/** The course, or null when it is not known. */
export async function findCourse(q: Queryable, key: string): Promise<CourseRow | null> {
  const rows = await q
    .select(courseColumns)
    .from(courses)
    .where(eq(courses.key, key));
  return rows[0] ?? null;
}

/** Every block of a course as flat records (empty when its structure is unknown). */
export async function loadBlockRecords(q: Queryable, courseKey: string): Promise<BlockRecord[]> {
  const rows = await q
    .select({
      key: blocks.key,
      type: blocks.type,
      parentKey: blocks.parentKey,
      position: blocks.position,
      mode: blocks.mode,
      visibleToStaffOnly: blocks.visibleToStaffOnly,
    })
    .from(blocks)
    .where(eq(blocks.courseKey, courseKey))
    .orderBy(asc(blocks.position));
  return rows.map((row) => ({ ...row, mode: row.mode as BlockMode }));
}

/** Creates the course or updates its mobile flag. */
export async function upsertCourse(q: Queryable, key: string, mobileAvailable: boolean | undefined): Promise<void> {
  await q
    .insert(courses)
    .values({ key, mobileAvailable: mobileAvailable ?? false })
    .onConflictDoUpdate({
      target: courses.key,
      set: mobileAvailable === undefined ? { key: sql`excluded.key` } : { mobileAvailable },
    });
}

/**
 * Replaces a course's block tree unless `hash` says it is the tree already
 * stored, recording how many completable blocks a learner can see in it.
 * Returns whether the structure changed (and its version moved on).
 */
export async function replaceStructure(
  q: Queryable,
  courseKey: string,
  rows: readonly BlockRow[],
  hash: string,
  visibleCompletableBlocks: number,
): Promise<boolean> {
  const current = await q
    .select({ hash: courses.structureHash })
    .from(courses)
    .where(eq(courses.key, courseKey))
    .for("update");
  if (current[0]?.hash === hash) return false;
  await q.delete(blocks).where(eq(blocks.courseKey, courseKey));
  for (let at = 0; at < rows.length; at += 1000) {
    await q.insert(blocks).values(
      rows.slice(at, at + 1000).map((row) => ({
        courseKey,
        key: row.key,
        type: row.type,
        parentKey: row.parentKey,
        position: row.position,
        mode: row.mode,
        displayName: row.displayName,
        start: row.start,
        visibleToStaffOnly: row.visibleToStaffOnly,
      })),
    );
  }
  await q
    .update(courses)
    .set({ structureHash: hash, structureVersion: sql`${courses.structureVersion} + 1`, visibleCompletableBlocks })
    .where(eq(courses.key, courseKey));
  return true;
}

/** Keys of every known course, in byte order. */
export async function listCourseKeys(q: Queryable): Promise<string[]> {
  const rows = await q.select({ key: courses.key }).from(courses).orderBy(sql`${courses.key} collate "C"`);
  return rows.map((row) => row.key);
}
