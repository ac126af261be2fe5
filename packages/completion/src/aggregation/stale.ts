import type { Database, Queryable } from "../db/database.js";
import type { CourseStructures } from "../domain/course-structures.js";
import { listCourseKeys } from "../repositories/courses.js";
import { hasActiveEnrollment } from "../repositories/enrollments.js";
import { findLearnerByUsername } from "../repositories/learners.js";
import { claimStale, findUnresolvedStale, markCourseStale, resolveStale, resolveStaleById, type StaleRow } from "../repositories/stale.js";
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

async function recomputeRecords(
  q: Queryable,
  structures: CourseStructures,
  settings: StaleSettings,
  username: string,
  courseKey: string,
  records: readonly StaleRow[],
  now: Date,
): Promise<void> {
  const learner = await findLearnerByUsername(q, username);
  const structure = await structures.get(q, courseKey);
  if (!learner || !structure) return;
  // Locks the enrollment row, so a completion batch for the same learner and course waits.
  await hasActiveEnrollment(q, learner.id, courseKey, true);
  await recomputeAggregates(q, structure, settings.aggregatorTypes, learner.id, scopeOf(records, settings), now);
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
  await db.transaction(async (tx) => {
    const records = await findUnresolvedStale(tx, learner.username, courseKey);
    if (records.length === 0) return;
    await recomputeRecords(tx, structures, settings, learner.username, courseKey, records, now);
    await resolveStale(tx, learner.username, courseKey);
  });
  return true;
}

/**
 * One round of the stale worker: claims up to `limit` unresolved records
 * (skipping ones another worker holds), recomputes each (learner, course)
 * they name and resolves them. Returns how many records it resolved.
 */
export async function resolveStaleRecords(
  db: Database,
  structures: CourseStructures,
  settings: StaleSettings,
  limit: number,
  now: () => Date,
): Promise<number> {
  return db.transaction(async (tx) => {
    const claimed = await claimStale(tx, limit);
    const groups = new Map<string, StaleRow[]>();
    for (const record of claimed) {
      const key = JSON.stringify([record.username, record.courseKey]);
      groups.set(key, [...(groups.get(key) ?? []), record]);
    }
    for (const records of groups.values()) {
      const first = records[0]!;
      await recomputeRecords(tx, structures, settings, first.username, first.courseKey, records, now());
    }
    await resolveStaleById(
      tx,
      claimed.map((record) => record.id),
    );
    return claimed.length;
  });
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
