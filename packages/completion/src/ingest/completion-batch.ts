import type { Database } from "../db/database.js";
import { isCompletionValue } from "../aggregation/completion-math.js";
import { recomputeAggregates } from "../aggregation/recompute.js";
import type { CourseStructures } from "../domain/course-structures.js";
import { parseCourseKey, resolveBlockKey } from "../domain/keys.js";
import { upsertCompletions } from "../repositories/completions.js";
import { lockEnrollmentByUsername } from "../repositories/enrollments.js";
import { findLearnerByUsername } from "../repositories/learners.js";

/** A batch of block completions, in the Open edX completion service's shape (C15). */
export interface CompletionBatch {
  readonly username: string;
  readonly course_key: string;
  readonly blocks: Readonly<Record<string, unknown>>;
}

/** Why a batch was refused: `invalid` is a 400, `unknown_user` a 404. */
export type BatchRefusal = { readonly refused: "invalid" | "unknown_user"; readonly detail: string };

/**
 * Stores a batch of completions all or nothing and, in the same transaction,
 * rewrites the stored aggregates of the changed blocks' ancestors, so reads
 * that follow are current. The course, the learner and their enrollment are
 * locked first, in the order of `aggregation/README.md`, so two batches for
 * the same learner and course never interleave their aggregate updates, and
 * a batch never deadlocks with the stale worker, a stale read or a bulk load.
 * @see https://github.com/openedx/completion (the batch endpoint's shape)
 */
export async function submitCompletionBatch(
  db: Database,
  structures: CourseStructures,
  aggregatorTypes: ReadonlySet<string>,
  batch: CompletionBatch,
  now: Date,
): Promise<BatchRefusal | null> {
  const courseKey = parseCourseKey(batch.course_key);
  if (!courseKey) return { refused: "invalid", detail: `Invalid course key: ${batch.course_key}` };
  for (const [blockKey, value] of Object.entries(batch.blocks)) {
    if (!isCompletionValue(value)) return { refused: "invalid", detail: `Invalid completion value for ${blockKey}: must be a number from 0 to 1.` };
  }
  return db.transaction(async (tx) => {
    // One query takes the locks and reads the course's structure digest; the cached tree is used when it is current.
    const enrollment = await lockEnrollmentByUsername(tx, batch.username, batch.course_key);
    if (!enrollment && !(await findLearnerByUsername(tx, batch.username))) {
      return { refused: "unknown_user", detail: `User not found: ${batch.username}` } as const;
    }
    if (!enrollment?.isActive) {
      return { refused: "invalid", detail: `User ${batch.username} is not actively enrolled in ${batch.course_key}.` } as const;
    }
    const cached = structures.peek(batch.course_key);
    const structure = cached && cached.course.structureHash === enrollment.courseHash ? cached : await structures.get(tx, batch.course_key);
    const learner = { id: enrollment.learnerId };
    // Keyed by canonical block key: an i4x:// and a block-v1: spelling of one block are one row.
    const values = new Map<string, number>();
    for (const [text, value] of Object.entries(batch.blocks)) {
      const blockKey = resolveBlockKey(text, courseKey);
      if (blockKey === null || !structure?.tree?.byKey.has(blockKey)) {
        return { refused: "invalid", detail: `Block ${text} is not in course ${batch.course_key}.` } as const;
      }
      values.set(blockKey, value as number);
    }
    const rows = [...values].map(([blockKey, completion]) => ({
      learnerId: learner.id,
      courseKey: batch.course_key,
      blockKey,
      completion,
      modified: now,
    }));
    if (rows.length === 0 || !structure) return null;
    await upsertCompletions(tx, rows);
    await recomputeAggregates(tx, structure, aggregatorTypes, learner.id, { changedBlocks: rows.map((row) => row.blockKey) }, now);
    return null;
  });
}
