import type { CompletionContext } from "../context.js";
import type { CourseStructure } from "../domain/course-structures.js";
import { percentOf } from "../aggregation/completion-math.js";
import { courseStatsSums, type StatsSums } from "../repositories/course-sums.js";
import { STALE_STRUCTURE } from "./course-reads.js";

/** The stats `mean_completion`; every number is null when no learner is selected (C12). */
export interface MeanCompletion {
  earned: number | null;
  possible: number | null;
  percent: number | null;
  ratio: number | null;
}

/**
 * Course statistics (C12): over the selected enrolled learners, earned =
 * total earned / learners; possible = average possible; percent = total
 * earned / (average possible × learners). A learner without a stored
 * aggregate has earned 0 of the course's possible. The query returns the
 * stored structure digest: on a cached tree (`current` false) that is no
 * longer the stored one, {@link STALE_STRUCTURE}. `sums` reads the course's
 * kept sums; a test passes a recomputation from the enrollments instead.
 */
export async function readCourseStats(
  ctx: CompletionContext,
  structure: CourseStructure,
  filters: { cohortId: number | null; excludeRoles: readonly string[] },
  current: boolean,
  sumsOf: (courseKey: string, filters: { cohortId: number | null; excludeRoles: readonly string[] }) => Promise<StatsSums> = (courseKey, selected) =>
    courseStatsSums(ctx.statements, courseKey, selected),
): Promise<MeanCompletion | typeof STALE_STRUCTURE> {
  const root = structure.tree?.root ?? null;
  const sums = await sumsOf(structure.course.key, filters);
  if (!current && sums.courseHash !== structure.course.structureHash) return STALE_STRUCTURE;
  if (sums.learners === 0) return { earned: null, possible: null, percent: null, ratio: null };
  if (!root) return { earned: 0, possible: null, percent: 0, ratio: 0 };
  const emptyPossible = structure.noProgress.get(root.key)!.possible;
  const totalPossible = sums.storedPossible + emptyPossible * (sums.learners - sums.withAggregate);
  const possible = totalPossible / sums.learners;
  const earned = sums.earned / sums.learners;
  const percent = percentOf({ earned: sums.earned, possible: possible * sums.learners });
  return { earned, possible, percent, ratio: percent };
}
