import type { Database } from "../db/database.js";
import type { CourseStructures } from "../domain/course-structures.js";
import { listCourseKeys } from "../repositories/courses.js";
import { lockLearnerInCourse } from "../repositories/enrollments.js";
import { findStalePairs, findUnresolvedStale, lockUnresolvedStale, markCourseStale, resolveStaleById, type StaleRow } from "../repositories/stale.js";
import { recomputeAggregates, type RecomputeScope } from "./recompute.js";

/** What recomputation needs to know: the stored types and the C14 switch. */
export interface StaleSettings {
  readonly aggregatorTypes: ReadonlySet<string>;
  /** `COMPLETION_REBUILD_STALE_FROM_SCRATCH`: ignore stored aggregates and rebuild them all. */
  readonly rebuildFromScratch: boolean;
}

/** A record naming a block limits the work to that block's ancestors, unless it is forced or the switch is on. */
function scopeOf(records: readonly StaleRow[], settings: StaleSettings): RecomputeScope {
  if (settings.rebuildFromScratch || records.some((record) => record.force || record.blockKey === null)) return { all: true };
  return { changedBlocks: records.map((record) => record.blockKey!) };
}

/**
 * Recomputes a learner's aggregates in a course from their unresolved stale
 * records and resolves those records, in a transaction of its own. Locks in
 * the order of `README.md` (course, learner, enrollment, stale records, then
 * aggregates), so it never deadlocks with a completion batch, a bulk load, a
 * stale read or another worker. Only the records read here are resolved: one
 * written meanwhile (a bulk load that changed the tree) stays for the next
 * round. Returns how many records it resolved.
 */
async function recomputeLearnerInCourse(
  db: Database,
  structures: CourseStructures,
  settings: StaleSettings,
  username: string,
  courseKey: string,
  now: Date,
): Promise<number> {
  return db.transaction(async (tx) => {
    const learnerId = await lockLearnerInCourse(tx, username, courseKey);
    const records = await lockUnresolvedStale(tx, username, courseKey);
    if (records.length === 0) return 0;
    // The tree is read once the locks are held: a bulk load that changed it has committed, or waits for this.
    const structure = learnerId === null ? null : await structures.get(tx, courseKey);
    if (learnerId !== null && structure) await recomputeAggregates(tx, structure, settings.aggregatorTypes, learnerId, scopeOf(records, settings), now);
    await resolveStaleById(
      tx,
      records.map((record) => record.id),
    );
    return records.length;
  });
}

/**
 * Single-user reads (C14): when the learner has unresolved stale records in
 * the course, recomputes and stores their aggregates and resolves the records
 * before the read. Returns whether anything was stale.
 */
export async function refreshStaleLearner(
  db: Database,
  structures: CourseStructures,
  settings: StaleSettings,
  learner: { id: number; username: string },
  courseKey: string,
  now: Date,
): Promise<boolean> {
  const stale = await findUnresolvedStale(db, learner.username, courseKey);
  if (stale.length === 0) return false;
  await recomputeLearnerInCourse(db, structures, settings, learner.username, courseKey, now);
  return true;
}

/**
 * One round of the stale worker: takes the (learner, course) pairs of the
 * oldest `limit` unresolved records and recomputes each, one transaction per
 * pair (see {@link recomputeLearnerInCourse}), resolving its records. Several
 * workers may run at once: one that reaches a pair another holds waits for
 * it, then finds nothing left to do. Returns how many records it resolved.
 */
export async function resolveStaleRecords(
  db: Database,
  structures: CourseStructures,
  settings: StaleSettings,
  limit: number,
  now: () => Date,
): Promise<number> {
  let resolved = 0;
  for (const pair of await findStalePairs(db, limit)) {
    resolved += await recomputeLearnerInCourse(db, structures, settings, pair.username, pair.courseKey, now());
  }
  return resolved;
}

/**
 * Forced re-aggregation (`completion reaggregate`): marks every learner of
 * the courses (see `markCourseStale`) stale with `force`, then works the
 * records off.
 * Returns how many records were resolved.
 */
export async function reaggregate(
  db: Database,
  structures: CourseStructures,
  settings: StaleSettings,
  courseKeys: readonly string[] | "all",
  now: () => Date,
): Promise<number> {
  const keys = courseKeys === "all" ? await listCourseKeys(db) : courseKeys;
  for (const key of keys) await markCourseStale(db, key, true);
  let resolved = 0;
  for (;;) {
    const round = await resolveStaleRecords(db, structures, settings, 500, now);
    resolved += round;
    if (round === 0) return resolved;
  }
}
