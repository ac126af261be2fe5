import type { SignonContext } from "../context.js";
import {
  commonTextPath,
  fewMatchesPath,
  countUsers,
  estimatePermissionHolders,
  estimateShortTextHolders,
  type UserCount,
  fewHoldersLimit,
  searchUsers,
  shortTextIndexLimit,
  shortTextLength,
  type TwoStepFilter,
  type UserListRow,
  type UserSearch,
  type UserStatus,
} from "../repositories/user-search.js";
import { readKeysetPage, type KeysetPage, type PagePosition } from "../repositories/keyset.js";
import { assignableRoles, managedOrganisationIds, type Actor } from "../web/policy.js";
import { lockSeconds } from "./sign-in.js";
import type { Role } from "./manage-users.js";

/** People shown on one page of the users list. */
export const usersPerPage = 50;

/** Up to this many people the list counts them exactly; beyond, it shows PostgreSQL's estimate ("about N"). */
export const exactCountLimit = 10_000;

const emailPattern = /^[^\s@]+@[^\s@]+$/;

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

/**
 * The search an actor's filters make. A search text that is a whole e-mail
 * address some matching person has finds that person only, through the
 * unique index on `lower(email)`; any other text is a fragment of names and
 * addresses: through the `pg_trgm` indexes, or, for a text many people hold
 * beside a filter an index serves, tested on each person that index finds
 * (`commonTextPath`). A permission filter says whether few people hold the
 * permission (`fewHoldersLimit`). When few people match and the filters'
 * indexes find them cheaply, the page reads them all and sorts them
 * (`fewMatchesPath`).
 */
export async function resolvedSearch(ctx: SignonContext, actor: Actor, filters: UserFilters): Promise<UserSearch> {
  const search = searchFor(ctx, actor, filters);
  if (search.permission !== undefined) {
    search.permission = { ...search.permission, fewHolders: (await estimatePermissionHolders(ctx.db, search.permission)) <= fewHoldersLimit };
  }
  if (search.text === undefined) return Object.assign(search, await fewMatchesPath(ctx.db, search));
  if (emailPattern.test(search.text)) {
    const exact: UserSearch = { ...search, text: undefined, exactEmail: search.text };
    if ((await searchUsers(ctx.db, exact, { kind: "first" }, 1)).length > 0) return exact;
  }
  // One or two characters that few people hold: through the index of short texts.
  if ([...search.text].length <= shortTextLength) search.shortText = (await estimateShortTextHolders(ctx.db, search.text)) <= shortTextIndexLimit;
  if (search.shortText !== true) search.commonText = await commonTextPath(ctx.db, search);
  return Object.assign(search, await fewMatchesPath(ctx.db, search));
}

/**
 * One page of the people the actor may manage that match the filters, by
 * name (keyset: after or before a row's key, or the first or last page).
 */
export async function findManageableUsers(ctx: SignonContext, search: UserSearch, position: PagePosition): Promise<KeysetPage<UserListRow>> {
  return readKeysetPage(position, usersPerPage, (at, limit) => searchUsers(ctx.db, search, at, limit), (row) => ({ text: row.sortName, uid: row.uid }));
}

/** How many people match: exact up to `exactCountLimit`, "more than" it, or an estimate (see `countUsers`). */
export async function countManageableUsers(ctx: SignonContext, search: UserSearch): Promise<UserCount> {
  return countUsers(ctx.db, search, exactCountLimit);
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
 * everyone who matches (its rows are the count); a count that ran out of time beside a sample that found fewer
 * than the count's limit says only what the pages prove (more than a page), as such a sample is too small to be
 * trusted.
 */
export function shownCount(counted: UserCount, page: KeysetPage<unknown>, first: boolean): UserCount {
  if (first && page.rows.length < usersPerPage) return { count: page.rows.length, exact: true, moreThan: false, tooSlowToCount: false };
  if (counted.tooSlowToCount && counted.count < exactCountLimit && (page.next !== null || page.previous !== null)) {
    return { count: usersPerPage, exact: false, moreThan: true, tooSlowToCount: true };
  }
  return counted;
}
