import type { SignonDatabase } from "../db/database.js";
import type { PagePosition } from "../repositories/keyset.js";
import { allUsersStatement, countMatches, sampleUsers, searchUsers, type UserListRow, type UserSearch } from "../repositories/user-search.js";
import { gatherFigures, shapeOf } from "./figures.js";
import { chooseSearchPlan, countAnswer, largerSampleRows, needsLargerSample, type CountOutcome, type PermissionPlan, type SearchFigures, type SearchPlan, type UserCount } from "./plan.js";

/** A search with the figures gathered for it and the plan chosen from them: what a page, a count and the export read. */
export interface PlannedSearch {
  readonly search: UserSearch;
  readonly figures: SearchFigures;
  readonly plan: SearchPlan;
}

/** Gathers a search's figures and chooses its plan (user-search/plan.ts). */
export async function planSearch(db: SignonDatabase, search: UserSearch): Promise<PlannedSearch> {
  const shape = shapeOf(search);
  const figures = await gatherFigures(db, search, shape);
  return { search, figures, plan: chooseSearchPlan(shape, figures) };
}

/** Up to `limit` people of a page of a planned search, in the direction the position reads. */
export function readPage(db: SignonDatabase, planned: PlannedSearch, position: PagePosition, limit: number): Promise<UserListRow[]> {
  return searchUsers(db, planned.search, planned.plan, position, limit);
}

/** How many people match a planned search, as its count plan says. */
export async function countPeople(db: SignonDatabase, planned: PlannedSearch): Promise<UserCount> {
  const { plan, figures, search } = planned;
  if (plan.count.kind === "too-slow-to-count") return countAnswer(plan.count, figures, await notCounted(db, search, plan.permission, plan.count.sampleRows));
  if (plan.count.kind !== "count") return countAnswer(plan.count, figures);
  const counted = await countMatches(db, search, plan, plan.count.upTo);
  if (counted !== null) return countAnswer(plan.count, figures, { counted });
  return countAnswer(plan.count, figures, await notCounted(db, search, plan.permission, needsLargerSample(figures.sample) ? largerSampleRows : null));
}

/** A count not had in its budget, with the larger sample of `rows` rows read in its place (none: the first sample stands). */
async function notCounted(db: SignonDatabase, search: UserSearch, permission: PermissionPlan, rows: number | null): Promise<CountOutcome> {
  if (rows === null) return { timedOut: true };
  const larger = await sampleUsers(db, search, permission === "none" ? undefined : permission, rows);
  return { timedOut: true, sample: { rows: larger.rows, matches: larger.matches } };
}

/** The statement of every person of a planned search, by name, for the export's cursor. */
export function exportStatement(db: SignonDatabase, planned: PlannedSearch): { text: string; values: unknown[] } {
  return allUsersStatement(db, planned.search, planned.plan);
}
