import { sql } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { cohortMemberships, cohorts, courseRoles } from "../db/schema.js";

/** Adds course roles (existing ones stay). */
export async function addCourseRoles(q: Queryable, rows: readonly { courseKey: string; learnerId: number; role: string }[]): Promise<void> {
  for (let at = 0; at < rows.length; at += 1000) {
    await q.insert(courseRoles).values(rows.slice(at, at + 1000).map((row) => ({ ...row }))).onConflictDoNothing();
  }
}

/** Creates or renames a cohort and sets its members to exactly `memberIds`. */
export async function putCohort(q: Queryable, cohort: { id: number; courseKey: string; name: string }, memberIds: readonly number[]): Promise<void> {
  await q
    .insert(cohorts)
    .values(cohort)
    .onConflictDoUpdate({ target: cohorts.id, set: { courseKey: sql`excluded.course_key`, name: sql`excluded.name` } });
  await q.delete(cohortMemberships).where(sql`${cohortMemberships.cohortId} = ${cohort.id}`);
  const unique = [...new Set(memberIds)];
  for (let at = 0; at < unique.length; at += 1000) {
    await q.insert(cohortMemberships).values(unique.slice(at, at + 1000).map((learnerId) => ({ cohortId: cohort.id, learnerId })));
  }
}
