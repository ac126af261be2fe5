import type { SignonContext } from "../context.js";
import { readKeysetPage, type KeysetPage, type PagePosition } from "../repositories/keyset.js";
import type { TwoStepFilter, UserListRow, UserSearch, UserStatus } from "../repositories/user-search.js";
import { exactCountLimit, type UserCount } from "../user-search/plan.js";
import { countPeople, planSearch, readPage, type PlannedSearch } from "../user-search/read.js";
import { assignableRoles, managedOrganisationIds, type Actor } from "../web/policy.js";
import { lockSeconds } from "./sign-in.js";
import type { Role } from "./manage-users.js";

export { exactCountLimit };

/** People shown on one page of the users list. */
export const usersPerPage = 50;

/** The filters of the users list, as the filter form sends them (`""`: no filter). */
export interface UserFilters {
  text: string;
  role: Role | "";
  /** An organisation id, `none` for people without one, or `""`. */
  organisation: string;
  status: UserStatus | "";
  /** `<application id>:<permission>`, or `""`. */
  permission: string;
  /** Set up, not set up, required but not set up, or exempt (`""`: any). */
  twoStep: TwoStepFilter | "";
}

/**
 * The people an actor may manage, the same set `mayManageUser` allows
 * (API users are listed on their own pages): superadmins see everyone, admins
 * everyone but superadmins, organisation admins and super organisation
 * admins the people of their organisations (`managedOrganisationIds`) whose
 * role is theirs or below, anyone else nobody.
 */
export function manageableScope(actor: Actor): Pick<UserSearch, "scopeRoles" | "scopeOrganisationIds"> {
  switch (actor.role) {
    case "superadmin":
      return { scopeRoles: ["superadmin", "admin", "super_organisation_admin", "organisation_admin", "normal"] };
    case "admin":
      return { scopeRoles: ["admin", "super_organisation_admin", "organisation_admin", "normal"] };
    case "super_organisation_admin":
    case "organisation_admin": {
      const scope = managedOrganisationIds(actor);
      return scope.length === 0 ? { scopeRoles: [] } : { scopeRoles: assignableRoles(actor), scopeOrganisationIds: scope };
    }
    default:
      return { scopeRoles: [] };
  }
}

function searchFor(ctx: SignonContext, actor: Actor, filters: UserFilters): UserSearch {
  const [applicationId, permission] = filters.permission === "" ? [] : splitOnce(filters.permission, ":");
  return {
    ...manageableScope(actor),
    text: filters.text.trim() === "" ? undefined : filters.text.trim(),
    role: filters.role === "" ? undefined : filters.role,
    organisationId: filters.organisation === "" ? undefined : filters.organisation === "none" ? null : filters.organisation,
    status: filters.status === "" ? undefined : filters.status,
    permission: applicationId !== undefined && permission !== undefined ? { applicationId, permission } : undefined,
    locksSetAfter: new Date(ctx.now().getTime() - lockSeconds * 1000),
    twoStep: filters.twoStep === "" ? undefined : filters.twoStep,
    twoStepRules: { requiredRoles: ctx.config.twoStepRequiredRoles, now: ctx.now() },
  };
}

function splitOnce(value: string, separator: string): [string, string] | [] {
  const at = value.indexOf(separator);
  return at < 0 ? [] : [value.slice(0, at), value.slice(at + 1)];
}

/** The search an actor's filters make, with the plan it is read by (user-search/plan.ts). */
export async function resolvedSearch(ctx: SignonContext, actor: Actor, filters: UserFilters): Promise<PlannedSearch> {
  return planSearch(ctx.db, searchFor(ctx, actor, filters));
}

/**
 * One page of the people the actor may manage that match the filters, by
 * name (keyset: after or before a row's key, or the first or last page).
 */
export async function findManageableUsers(ctx: SignonContext, search: PlannedSearch, position: PagePosition): Promise<KeysetPage<UserListRow>> {
  return readKeysetPage(position, usersPerPage, (at, limit) => readPage(ctx.db, search, at, limit), (row) => ({ text: row.sortName, uid: row.uid }));
}

/** How many people match: exact up to `exactCountLimit`, "more than" it, or an estimate (user-search/plan.ts). */
export async function countManageableUsers(ctx: SignonContext, search: PlannedSearch): Promise<UserCount> {
  return countPeople(ctx.db, search);
}

/** The status tags of a person: suspended, locked, invited, or active when none applies. */
export function statusTags(ctx: SignonContext, row: Pick<UserListRow, "suspendedAt" | "lockedAt" | "hasPassword">): UserStatus[] {
  const tags: UserStatus[] = [];
  if (row.suspendedAt !== null) tags.push("suspended");
  if (row.lockedAt !== null && row.lockedAt.getTime() + lockSeconds * 1000 > ctx.now().getTime()) tags.push("locked");
  if (!row.hasPassword) tags.push("invited");
  return tags.length === 0 ? ["active"] : tags;
}

/**
 * What the list says of how many match, never what its page contradicts: a first page with room to spare holds
 * everyone who matches (its rows are the count); an estimate below what the pages prove (a page and more) says
 * "more than" a page instead. An estimate that is not contradicted stays, however small: within about 2×, it says
 * more than "more than 50" would.
 */
export function shownCount(counted: UserCount, page: KeysetPage<unknown>, first: boolean): UserCount {
  if (first && page.rows.length < usersPerPage) return { count: page.rows.length, exact: true, moreThan: false, tooSlowToCount: false };
  const morePages = page.next !== null || page.previous !== null;
  if (!counted.exact && !counted.moreThan && morePages && counted.count <= usersPerPage) {
    return { count: usersPerPage, exact: false, moreThan: true, tooSlowToCount: counted.tooSlowToCount };
  }
  return counted;
}
