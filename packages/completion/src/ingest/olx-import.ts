import type { CompletionContext } from "../context.js";
import { loadBulkData, type BulkLoadSummary } from "./bulk-load.js";
import { readOlxCourse } from "./olx.js";

/**
 * Imports a course tree from an Open edX OLX export directory, through the
 * bulk loader: a changed tree marks the course's learners stale (C14).
 */
export async function importOlxCourse(
  ctx: CompletionContext,
  directory: string,
  courseKey?: string,
): Promise<{ courseKey: string; summary: BulkLoadSummary }> {
  const course = await readOlxCourse(directory, courseKey);
  const summary = await loadBulkData(
    ctx.db,
    ctx.structures,
    ctx.settings.aggregatorTypes,
    { courses: [{ course_key: course.courseKey, structure: course.structure }] },
    ctx.now(),
  );
  return { courseKey: course.courseKey, summary };
}
