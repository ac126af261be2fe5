import { sql } from "drizzle-orm";
import type { Database, Transaction } from "../db/database.js";
import { recomputeAggregates } from "../aggregation/recompute.js";
import type { CourseStructures } from "../domain/course-structures.js";
import { CourseTreeError } from "../domain/course-tree.js";
import { parseCourseKey, resolveBlockKey, type CourseKey } from "../domain/keys.js";
import { findUnstorableInput } from "../domain/storable-input.js";
import { parseTimestamp } from "../domain/timestamps.js";
import { findCourse, replaceStructure, upsertCourse, type BlockRow } from "../repositories/courses.js";
import { upsertCompletions } from "../repositories/completions.js";
import { lockEnrollments, upsertEnrollments } from "../repositories/enrollments.js";
import { findLearnersByUsername, findUsernamesById, upsertLearners } from "../repositories/learners.js";
import { addCourseRoles, putCohort } from "../repositories/roles-and-cohorts.js";
import { lockUnresolvedStaleOf, markCourseStale, markLearnerStale, resolveStale } from "../repositories/stale.js";
import type { BulkData } from "./bulk-format.js";
import { flattenStructure, structureHash, visibleCompletableCount } from "./bulk-structure.js";

/** Problems that stop a bulk load; nothing was written. */
export class BulkLoadError extends Error {
  override readonly name = "BulkLoadError";
  constructor(readonly problems: readonly string[]) {
    super(problems.join("\n"));
  }
}

/** What a bulk load changed. */
export interface BulkLoadSummary {
  courses: number;
  structuresChanged: number;
  users: number;
  enrollments: number;
  roles: number;
  cohorts: number;
  completions: number;
  learnersMarkedStale: number;
}

/** The first key of the advisory lock that lets one bulk load run at a time ("bulk" in ASCII). */
const BULK_LOAD_LOCK = 0x62756c6b;

function fail(problems: string[], text: string): void {
  if (problems.length < 50) problems.push(text);
}

/**
 * Loads bulk data (the format of `bulk-format.ts`) in one transaction: all of
 * it or none of it. Records are upserted, so loading the same file twice gives
 * the same state. A course whose stored structure changes marks its enrolled
 * learners stale (C14); learners whose completions the file carries are
 * recomputed at once, so their reads are current when the load returns. One
 * bulk load runs at a time, and each takes its locks in the order of
 * `aggregation/README.md`.
 */
export async function loadBulkData(
  db: Database,
  structures: CourseStructures,
  aggregatorTypes: ReadonlySet<string>,
  data: BulkData,
  now: Date,
): Promise<BulkLoadSummary> {
  // The HTTP route refuses these before validation; the CLI and the OLX import come here directly.
  const unstorable = findUnstorableInput(data);
  if (unstorable) throw new BulkLoadError([`${unstorable.path}: ${unstorable.reason}`]);
  const problems: string[] = [];
  const parsedCourses = new Map<string, CourseKey>();
  const courseStructures = new Map<string, BlockRow[] | null>();
  (data.courses ?? []).forEach((course, index) => {
    const key = parseCourseKey(course.course_key);
    if (!key) return fail(problems, `/courses/${index}/course_key: invalid course key ${course.course_key}`);
    if (parsedCourses.has(course.course_key)) return fail(problems, `/courses/${index}: course ${course.course_key} appears twice`);
    parsedCourses.set(course.course_key, key);
    if (!course.structure) return void courseStructures.set(course.course_key, null);
    try {
      courseStructures.set(course.course_key, flattenStructure(key, course.structure));
    } catch (error) {
      if (!(error instanceof CourseTreeError)) throw error;
      fail(problems, `/courses/${index}/structure: ${error.message}`);
    }
  });
  const fileUsers = new Map<string, number>();
  const fileIds = new Set<number>();
  (data.users ?? []).forEach((user, index) => {
    if (fileUsers.has(user.username)) fail(problems, `/users/${index}: username ${user.username} appears twice`);
    if (fileIds.has(user.id)) fail(problems, `/users/${index}: id ${user.id} appears twice`);
    fileUsers.set(user.username, user.id);
    fileIds.add(user.id);
  });
  if (problems.length > 0) throw new BulkLoadError(problems);

  try {
    return await writeBulkData(db, structures, aggregatorTypes, data, courseStructures, now);
  } catch (error) {
    // A unique key of stored data (a username or Sign-on uid held by another learner id): refuse, do not crash.
    const violation = uniqueViolation(error);
    if (violation) throw new BulkLoadError([`conflicts with stored data: ${violation.detail ?? "duplicate key"}`]);
    throw error;
  }
}

/** The PostgreSQL unique-violation error (23505) in an error's cause chain, if any. */
function uniqueViolation(error: unknown): { detail?: string } | null {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    if ((current as { code?: unknown }).code === "23505") return current as { detail?: string };
  }
  return null;
}

async function writeBulkData(
  db: Database,
  structures: CourseStructures,
  aggregatorTypes: ReadonlySet<string>,
  data: BulkData,
  courseStructures: ReadonlyMap<string, BlockRow[] | null>,
  now: Date,
): Promise<BulkLoadSummary> {
  return db.transaction(async (tx) => {
    // Declared in the transaction: a run again after a deadlock starts afresh.
    const problems: string[] = [];
    // One bulk load at a time; then the locks of README.md's order, taken pair by pair as the load goes.
    await tx.execute(sql`select pg_advisory_xact_lock(${BULK_LOAD_LOCK}, 0)`);
    const summary: BulkLoadSummary = {
      courses: 0,
      structuresChanged: 0,
      users: 0,
      enrollments: 0,
      roles: 0,
      cohorts: 0,
      completions: 0,
      learnersMarkedStale: 0,
    };
    const changedCourses: string[] = [];
    for (const course of data.courses ?? []) {
      const previous = await findCourse(tx, course.course_key);
      await upsertCourse(tx, course.course_key, course.mobile_available);
      summary.courses += 1;
      const rows = courseStructures.get(course.course_key);
      if (rows && (await replaceStructure(tx, course.course_key, rows, structureHash(rows), visibleCompletableCount(rows)))) {
        summary.structuresChanged += 1;
        if (previous && previous.structureVersion > 0) changedCourses.push(course.course_key);
      }
    }

    const previousUsernames = await findUsernamesById(tx, (data.users ?? []).map((user) => user.id));
    await upsertLearners(
      tx,
      (data.users ?? []).map((user) => ({ id: user.id, username: user.username, email: user.email, signonUid: user.uid ?? null })),
    );
    summary.users = data.users?.length ?? 0;
    // Stale records go by username: a renamed learner's are written again under the new name.
    for (const user of data.users ?? []) {
      const previous = previousUsernames.get(user.id);
      if (previous !== undefined && previous !== user.username) summary.learnersMarkedStale += await markLearnerStale(tx, user.id);
    }

    const referenced = new Set<string>();
    for (const section of [data.enrollments, data.roles, data.completions]) for (const row of section ?? []) referenced.add(row.username);
    for (const cohort of data.cohorts ?? []) for (const member of cohort.members) referenced.add(member);
    const learnerIds = new Map<string, number>();
    for (const [username, learner] of await findLearnersByUsername(tx, [...referenced])) learnerIds.set(username, learner.id);
    const knownCourses = new Map<string, CourseKey>();
    const courseKeyOf = async (text: string): Promise<CourseKey | null> => {
      if (knownCourses.has(text)) return knownCourses.get(text)!;
      const key = parseCourseKey(text);
      const found = key && (await findCourse(tx, text)) ? key : null;
      if (found) knownCourses.set(text, found);
      return found;
    };
    const check = async (path: string, username: string, courseKey: string): Promise<{ learnerId: number; course: CourseKey } | null> => {
      const learnerId = learnerIds.get(username);
      const course = await courseKeyOf(courseKey);
      if (learnerId === undefined) fail(problems, `${path}: unknown user ${username}`);
      if (!course) fail(problems, `${path}: unknown or invalid course ${courseKey}`);
      return learnerId !== undefined && course ? { learnerId, course } : null;
    };

    const enrollmentRows: { learnerId: number; courseKey: string; isActive: boolean; mode: string }[] = [];
    const enrolled = new Set<string>();
    for (const [index, row] of (data.enrollments ?? []).entries()) {
      const found = await check(`/enrollments/${index}`, row.username, row.course_key);
      if (!found) continue;
      // One upsert cannot write a row twice: two states for one enrollment are refused, as two users with one name are.
      const pair = `${found.learnerId} ${row.course_key}`;
      if (enrolled.has(pair)) fail(problems, `/enrollments/${index}: the enrollment of ${row.username} in ${row.course_key} appears twice`);
      enrolled.add(pair);
      enrollmentRows.push({ learnerId: found.learnerId, courseKey: row.course_key, isActive: row.is_active ?? true, mode: row.mode ?? "audit" });
    }
    const roleRows: { learnerId: number; courseKey: string; role: string }[] = [];
    for (const [index, row] of (data.roles ?? []).entries()) {
      const found = await check(`/roles/${index}`, row.username, row.course_key);
      if (found) roleRows.push({ learnerId: found.learnerId, courseKey: row.course_key, role: row.role });
    }
    const cohortRows: { id: number; courseKey: string; name: string; members: number[] }[] = [];
    for (const [index, cohort] of (data.cohorts ?? []).entries()) {
      if (!(await courseKeyOf(cohort.course_key))) fail(problems, `/cohorts/${index}: unknown or invalid course ${cohort.course_key}`);
      const members: number[] = [];
      for (const member of cohort.members) {
        const id = learnerIds.get(member);
        if (id === undefined) fail(problems, `/cohorts/${index}: unknown user ${member}`);
        else members.push(id);
      }
      cohortRows.push({ id: cohort.id, courseKey: cohort.course_key, name: cohort.name, members });
    }
    const completionRows = new Map<string, { learnerId: number; courseKey: string; blockKey: string; completion: number; modified: Date }>();
    for (const [index, row] of (data.completions ?? []).entries()) {
      const found = await check(`/completions/${index}`, row.username, row.course_key);
      if (!found) continue;
      const structure = await structures.get(tx, row.course_key);
      const blockKey = resolveBlockKey(row.block_key, found.course);
      if (blockKey === null || !structure?.tree?.byKey.has(blockKey)) {
        fail(problems, `/completions/${index}: block ${row.block_key} is not in course ${row.course_key}`);
        continue;
      }
      const modified = row.modified ? parseTimestamp(row.modified) : now;
      if (!modified) {
        fail(problems, `/completions/${index}/modified: ${row.modified} is not a date-time from year 0001 to 9999 (UTC)`);
        continue;
      }
      completionRows.set(`${found.learnerId} ${row.course_key} ${blockKey}`, {
        learnerId: found.learnerId,
        courseKey: row.course_key,
        blockKey,
        completion: row.completion,
        modified,
      });
    }
    if (problems.length > 0) throw new BulkLoadError(problems);

    await upsertEnrollments(tx, enrollmentRows);
    summary.enrollments = enrollmentRows.length;
    await addCourseRoles(tx, roleRows);
    summary.roles = roleRows.length;
    for (const cohort of cohortRows) await putCohort(tx, cohort, cohort.members);
    summary.cohorts = cohortRows.length;
    // Each (learner, course) whose completions the file carries: its enrollment, then its stale records, before its
    // completions and aggregates are written (README.md's order; the enrollments written above are held already).
    const touched = touchedPairs([...completionRows.values()]);
    await lockEnrollments(tx, touched);
    const usernames = new Map([...learnerIds].map(([username, id]) => [id, username]));
    await lockUnresolvedStaleOf(
      tx,
      touched.map((pair) => ({ username: usernames.get(pair.learnerId)!, courseKey: pair.courseKey })),
    );
    await upsertCompletions(tx, [...completionRows.values()]);
    summary.completions = completionRows.size;

    for (const courseKey of changedCourses) summary.learnersMarkedStale += await markCourseStale(tx, courseKey, false);
    await recomputeTouched(tx, structures, aggregatorTypes, touched, usernames, now);
    return summary;
  });
}

/** The (learner, course) pairs of some completion rows, each once. */
function touchedPairs(rows: readonly { learnerId: number; courseKey: string }[]): { learnerId: number; courseKey: string }[] {
  const pairs = new Map<string, { learnerId: number; courseKey: string }>();
  for (const { learnerId, courseKey } of rows) pairs.set(`${learnerId} ${courseKey}`, { learnerId, courseKey });
  return [...pairs.values()];
}

/** Recomputes, in full, every (learner, course) whose completions the load wrote; their stale records are then resolved. */
async function recomputeTouched(
  tx: Transaction,
  structures: CourseStructures,
  aggregatorTypes: ReadonlySet<string>,
  pairs: readonly { learnerId: number; courseKey: string }[],
  usernames: ReadonlyMap<number, string>,
  now: Date,
): Promise<void> {
  for (const { learnerId, courseKey } of pairs) {
    const structure = await structures.get(tx, courseKey);
    if (!structure) continue;
    await recomputeAggregates(tx, structure, aggregatorTypes, learnerId, { all: true }, now);
    await resolveStale(tx, usernames.get(learnerId)!, courseKey);
  }
}
