import { and, asc, eq, gt, inArray, isNotNull, isNull, lte, or, sql, type SQL } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { organisations, userPermissions, users } from "../db/schema.js";
import { keysetClauses, type PagePosition } from "./keyset.js";
import { sqlStateOf } from "./unique-violation.js";

/** Every role the `users_role_check` constraint allows. */
const everyRole = ["superadmin", "admin", "super_organisation_admin", "organisation_admin", "normal"];

/** The account states a list can be filtered by; `invited` means no password has been set yet. */
export const userStatuses = ["active", "suspended", "locked", "invited"] as const;
export type UserStatus = (typeof userStatuses)[number];

/**
 * The 2-step states a list can be filtered by: set up (`on`), not set up
 * (`off`), required but not set up (`missing`), and exempt (an exemption that
 * still applies).
 */
export const twoStepFilters = ["on", "off", "missing", "exempt"] as const;
export type TwoStepFilter = (typeof twoStepFilters)[number];

/** Which people a search looks at, and how it narrows them. */
export interface UserSearch {
  /** Only people of these organisations (an organisation admin's or super organisation admin's scope). */
  scopeOrganisationIds?: readonly string[] | undefined;
  /** Only people with one of these roles. */
  scopeRoles: readonly string[];
  /** Case-insensitive part of the name or e-mail address. */
  text?: string | undefined;
  /**
   * The text is common and another filter narrows through an index (see
   * `commonTextPath`): the text is tested on each person that filter's index
   * finds, and the page sorts what is found. Neither the trigram indexes
   * (where a common text is a list of most people) nor a walk along the
   * order of names (unbounded when the other filters match fewer people than
   * PostgreSQL expects) is read.
   */
  commonText?: boolean | undefined;
  /** A whole e-mail address, in any case (through the unique index on `lower(email)`). */
  exactEmail?: string | undefined;
  role?: string | undefined;
  /** An organisation id, or `null` for people without one. */
  organisationId?: string | null | undefined;
  status?: UserStatus | undefined;
  /**
   * People holding this permission. With `fewHolders` (at most
   * `fewHoldersLimit`, by PostgreSQL's estimate) a page starts from the
   * holders rather than from the order of names.
   */
  permission?: { applicationId: string; permission: string; fewHolders?: boolean } | undefined;
  /** Locks set after this time still hold (S15: a lock lifts by itself after an hour). */
  locksSetAfter: Date;
  twoStep?: TwoStepFilter | undefined;
  /** What `missing` and `exempt` are measured against: the roles that must use 2-step verification, and now. */
  twoStepRules: { requiredRoles: readonly string[]; now: Date };
}

/** One person as the users list and its CSV export show them. */
export interface UserListRow {
  uid: string;
  /** `lower(name)`, as PostgreSQL computes it: the list's order, then the uid. */
  sortName: string;
  name: string;
  email: string;
  role: string;
  organisationName: string | null;
  suspendedAt: Date | null;
  lockedAt: Date | null;
  hasPassword: boolean;
  lastSignedInAt: Date | null;
  createdAt: Date;
}

/** Escapes `%`, `_` and `\` so the text matches only itself inside a LIKE pattern. */
export function escapeLikePattern(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

function conditions(search: UserSearch): SQL[] {
  // Written as the partial indexes' predicate (`not is_api_user`), so that they serve the list.
  const where: SQL[] = [sql`not ${users.isApiUser}`];
  // Every role allowed is no condition at all (the check constraint knows no other), which leaves the indexes free.
  if (!everyRole.every((role) => search.scopeRoles.includes(role))) where.push(inArray(users.role, [...search.scopeRoles]));
  if (search.scopeOrganisationIds !== undefined) where.push(inArray(users.organisationId, [...search.scopeOrganisationIds]));
  if (search.text !== undefined && search.text !== "") {
    const pattern = `%${escapeLikePattern(search.text)}%`;
    const holds = sql`(${users.name} ilike ${pattern} escape '\\' or ${users.email} ilike ${pattern} escape '\\')`;
    // `is true` is no condition an index can serve, and PostgreSQL estimates it as the condition it tests: the
    // statistics stay, only the trigram indexes are out of the plan.
    where.push(search.commonText === true ? sql`(${holds} is true)` : holds);
  }
  if (search.exactEmail !== undefined) where.push(sql`lower(${users.email}) = lower(${search.exactEmail})`);
  if (search.role !== undefined) where.push(eq(users.role, search.role));
  if (search.organisationId === null) where.push(isNull(users.organisationId));
  else if (search.organisationId !== undefined) where.push(eq(users.organisationId, search.organisationId));
  const locked = and(isNotNull(users.lockedAt), gt(users.lockedAt, search.locksSetAfter)) as SQL;
  switch (search.status) {
    case "suspended":
      where.push(sql`${users.suspendedAt} is not null`);
      break;
    case "locked":
      where.push(locked);
      break;
    case "invited":
      where.push(sql`${users.passwordHash} is null`);
      break;
    case "active":
      where.push(isNull(users.suspendedAt), isNotNull(users.passwordHash), or(isNull(users.lockedAt), lte(users.lockedAt, search.locksSetAfter)) as SQL);
      break;
    case undefined:
      break;
  }
  if (search.twoStep !== undefined) where.push(twoStepCondition(search.twoStep, search.twoStepRules));
  if (search.permission) {
    where.push(
      sql`exists (select 1 from ${userPermissions} where ${userPermissions.userUid} = ${users.uid} and ${userPermissions.applicationId} = ${search.permission.applicationId} and ${userPermissions.permission} = ${search.permission.permission})`,
    );
  }
  return where;
}

/**
 * The SQL of `twoStepRequirement` (accounts/two-step-mandate.ts): a required
 * role, or the organisation's or the person's own requirement without an
 * exemption that still applies. Needs `organisations` joined.
 */
function twoStepCondition(filter: TwoStepFilter, rules: SearchRules): SQL {
  const exempt = and(isNotNull(users.twoStepExemptUntil), gt(users.twoStepExemptUntil, rules.now)) as SQL;
  const byRole = rules.requiredRoles.length === 0 ? sql`false` : inArray(users.role, [...rules.requiredRoles]);
  const required = sql`(${byRole} or ((${users.twoStepRequired} or coalesce(${organisations.twoStepRequired}, false)) and not ${exempt}))`;
  switch (filter) {
    case "on":
      return or(isNotNull(users.otpEnabledAt), gt(users.passkeyCount, 0)) as SQL;
    case "off":
      return and(isNull(users.otpEnabledAt), eq(users.passkeyCount, 0)) as SQL;
    case "missing":
      return and(isNull(users.otpEnabledAt), eq(users.passkeyCount, 0), required) as SQL;
    case "exempt":
      return exempt;
  }
}

type SearchRules = UserSearch["twoStepRules"];

/** What the list and the export show of a person, in this order. */
const listFields = {
  uid: users.uid,
  sortName: sql<string>`lower(${users.name})`,
  name: users.name,
  email: users.email,
  role: users.role,
  organisationName: organisations.name,
  suspendedAt: users.suspendedAt,
  lockedAt: users.lockedAt,
  hasPassword: sql<boolean>`(${users.passwordHash} is not null)`,
  lastSignedInAt: users.lastSignedInAt,
  createdAt: users.createdAt,
};

function listQuery(db: SignonDatabase, search: UserSearch, extra: SQL[] = []) {
  return db
    .select(listFields)
    .from(users)
    .leftJoin(organisations, eq(organisations.id, users.organisationId))
    .where(and(...conditions(search), ...extra))
    .$dynamic();
}

/**
 * One page of the people matching a search, by `lower(name)` then uid, read
 * through the indexes of that order: `limit` rows from the start, after or
 * before a row's key, or at the end (the last two read backwards: the caller
 * reverses them).
 */
export async function searchUsers(db: SignonDatabase, search: UserSearch, position: PagePosition, limit: number): Promise<UserListRow[]> {
  return userPageQuery(db, search, position, limit);
}

/**
 * Up to this many holders of a permission, a page filtered by it reads all of
 * them (the permission's index, then each holder by primary key) and sorts
 * them by name: work in proportion to the holders. Walking the order of
 * names instead looks at about `limit` × people / holders people until a
 * page is found, each one fetched and probed for the permission: for a rare
 * permission that is the larger (at 1M people and 5,000 holders, some 25,000
 * people against 5,000), for a common one the smaller. PostgreSQL's planner
 * prices the walk as if matches came evenly and picks it either way.
 */
export const fewHoldersLimit = 10_000;

/** PostgreSQL's estimate of how many people hold a permission (EXPLAIN of the permission's index). */
export async function estimatePermissionHolders(db: SignonDatabase, permission: { applicationId: string; permission: string }): Promise<number> {
  const holders = db
    .select({ one: sql`1` })
    .from(userPermissions)
    .where(and(eq(userPermissions.applicationId, permission.applicationId), eq(userPermissions.permission, permission.permission)));
  const explained = await db.execute<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }>(sql`explain (format json) ${holders}`);
  return Math.round(explained.rows[0]?.["QUERY PLAN"][0].Plan["Plan Rows"] ?? 0);
}

/** The query of `searchUsers`, for EXPLAIN. */
export function userPageQuery(db: SignonDatabase, search: UserSearch, position: PagePosition, limit: number) {
  // For a common text, the order of names written as no index has it: the page is sorted from what the filters find.
  const sortName = search.commonText === true ? sql`(lower(${users.name}) || '')` : sql`lower(${users.name})`;
  const { where, orderBy } = keysetClauses(position, sortName, users.uid);
  const keyset = where === undefined ? [] : [where];
  if (search.permission?.fewHolders === true) {
    const holders = db
      .select({ uid: userPermissions.userUid })
      .from(userPermissions)
      .where(and(eq(userPermissions.applicationId, search.permission.applicationId), eq(userPermissions.permission, search.permission.permission)))
      .as("holders");
    // Each holder looked up by primary key (`limit 1` keeps the lateral subquery a lookup per holder; a uid is one person).
    const person = db
      .select({ ...listFields, sortName: sql<string>`lower(${users.name})`.as("sort_name"), organisationName: sql<string | null>`${organisations.name}`.as("organisation_name"), hasPassword: sql<boolean>`(${users.passwordHash} is not null)`.as("has_password") })
      .from(users)
      .leftJoin(organisations, eq(organisations.id, users.organisationId))
      .where(and(eq(users.uid, holders.uid), ...conditions({ ...search, permission: undefined }), ...keyset))
      .limit(1)
      .as("person");
    const outer = keysetClauses(position, sql`${person.sortName}`, person.uid);
    return db
      .select({
        uid: person.uid,
        sortName: person.sortName,
        name: person.name,
        email: person.email,
        role: person.role,
        organisationName: person.organisationName,
        suspendedAt: person.suspendedAt,
        lockedAt: person.lockedAt,
        hasPassword: person.hasPassword,
        lastSignedInAt: person.lastSignedInAt,
        createdAt: person.createdAt,
      })
      .from(holders)
      .crossJoinLateral(person)
      .orderBy(...outer.orderBy)
      .limit(limit)
      .$dynamic();
  }
  return listQuery(db, search, keyset)
    .orderBy(...orderBy)
    .limit(limit);
}

/**
 * Every person matching a search, by `lower(name)` then uid, as one SQL
 * statement for a server-side cursor; each row is an array in the order of
 * `UserListRow`'s fields (`toUserListRow`).
 */
export function allUsersStatement(db: SignonDatabase, search: UserSearch): { text: string; values: unknown[] } {
  const { sql: text, params } = db
    .select({
      ...listFields,
      // Each person's permissions as `<application id>:<permission>`, sorted by permission (the primary key's index, per person).
      permissions: sql<string[]>`array(select ${userPermissions.applicationId}::text || ':' || ${userPermissions.permission} from ${userPermissions} where ${userPermissions.userUid} = ${users.uid} order by ${userPermissions.permission})`,
    })
    .from(users)
    .leftJoin(organisations, eq(organisations.id, users.organisationId))
    .where(and(...conditions(search)))
    .orderBy(asc(sql`lower(${users.name})`), asc(users.uid))
    .toSQL();
  return { text, values: params };
}

/** A row of `allUsersStatement`, read in array mode with `pg`'s usual types. */
export function toUserExportRow(row: unknown[]): UserListRow & { permissions: string[] } {
  const [uid, sortName, name, email, role, organisationName, suspendedAt, lockedAt, hasPassword, lastSignedInAt, createdAt, permissions] = row;
  return { uid, sortName, name, email, role, organisationName, suspendedAt, lockedAt, hasPassword, lastSignedInAt, createdAt, permissions } as UserListRow & {
    permissions: string[];
  };
}

/** How many people match a search, as the list says it. */
export interface UserCount {
  /** Exact, the limit counted past, or PostgreSQL's estimate. */
  count: number;
  /** Counted one by one: `count` is the number of people who match. */
  exact: boolean;
  /** Counted one by one up to the limit, and more match: "more than `count`". */
  moreThan: boolean;
  /** The estimate stands in for a count that ran past its time: `count` is PostgreSQL's estimate. */
  tooSlowToCount: boolean;
}

/** The most time the count of a list may take (a database statement timeout); past it, the list shows the estimate. */
export const countBudgetMs = 100;

/**
 * How many people match, in work bounded whatever the filters. PostgreSQL's
 * estimate first (EXPLAIN: planning only, from its statistics); when it is
 * over `exactUpTo`, that is the answer ("about N"). Otherwise the people are
 * counted (`userCountQuery`), stopping at `exactUpTo + 1`: exact when at most
 * `exactUpTo`, else "more than `exactUpTo`". The count runs under a statement timeout of
 * `budgetMs`: filters whose matches no index finds (a rare combination of
 * common ones) would make it read everyone, and then the estimate is the
 * answer instead.
 */
export async function countUsers(db: SignonDatabase, search: UserSearch, exactUpTo: number, budgetMs = countBudgetMs): Promise<UserCount> {
  const estimate = await estimateUsers(db, search);
  if (estimate > exactUpTo) return { count: estimate, exact: false, moreThan: false, tooSlowToCount: false };
  let count: number;
  try {
    count = await inCountTransaction(db, budgetMs, async (tx) => {
      const counted = await tx.execute<{ count: number }>(userCountQuery(tx, search, exactUpTo));
      return counted.rows[0]?.count ?? 0;
    });
  } catch (error) {
    // 57014: cancelled by the statement timeout.
    if (sqlStateOf(error) === "57014") return { count: estimate, exact: false, moreThan: false, tooSlowToCount: true };
    throw error;
  }
  return count <= exactUpTo
    ? { count, exact: true, moreThan: false, tooSlowToCount: false }
    : { count: exactUpTo, exact: false, moreThan: true, tooSlowToCount: false };
}

/**
 * Runs `work` in a transaction set up as the count runs: a statement timeout
 * of `budgetMs`, and sequential scans only where no index can serve. The few
 * matches the count is asked for are found through an index (a rare
 * permission's holders, each looked up by primary key), never by hashing a
 * scan of everyone, which the planner may find cheaper on a smaller table
 * but which grows with it.
 */
export async function inCountTransaction<T>(db: SignonDatabase, budgetMs: number, work: (tx: SignonDatabase) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql.raw(`set local statement_timeout = ${Math.max(1, Math.round(budgetMs))}`));
    await tx.execute(sql.raw("set local enable_seqscan = off"));
    return work(tx as unknown as SignonDatabase);
  });
}

/**
 * From this many people holding a search text (by PostgreSQL's estimate), it
 * is common: reading it from the trigram indexes means reading a list of
 * them all (at 1M people, the 250,000 addresses that hold `example.org` took
 * 56 to 104 ms before any other filter applied).
 */
export const commonTextMatches = 20_000;

/** At most this many people found by the other filters' indexes (by estimate) are tested one by one for a common text. */
export const narrowFiltersLimit = 50_000;

/** PostgreSQL's estimate of how many people (not API users) hold a search text in their name or e-mail address. */
export async function estimateTextMatches(db: SignonDatabase, text: string): Promise<number> {
  return estimateUsers(db, { scopeRoles: everyRole, text, locksSetAfter: new Date(0), twoStepRules: { requiredRoles: [], now: new Date(0) } });
}

/**
 * The filters of a search that an index of `users` serves: the
 * organisation (or none), the role, the scope, a suspended, invited or
 * locked status, 2-step set up or exempt, and a permission few people hold;
 * `null` when it has none.
 */
function indexedFilters(search: UserSearch): UserSearch | null {
  const status = search.status === "suspended" || search.status === "invited" || search.status === "locked" ? search.status : undefined;
  const twoStep = search.twoStep === "on" || search.twoStep === "exempt" ? search.twoStep : undefined;
  const permission = search.permission?.fewHolders === true ? search.permission : undefined;
  const narrowing = search.scopeOrganisationIds !== undefined || search.role !== undefined || search.organisationId !== undefined || status || twoStep || permission;
  if (!narrowing) return null;
  return { ...search, text: undefined, commonText: undefined, exactEmail: undefined, status, twoStep, permission };
}

/**
 * Whether a search's text is read as a common one (`UserSearch.commonText`):
 * PostgreSQL expects at least `commonTextMatches` people to hold it, and the
 * filters an index serves find at most `narrowFiltersLimit` people, and at
 * most half as many as hold the text. Each of those is then tested for the
 * text, whatever the other filters: the work is bounded by the index's
 * people, which PostgreSQL estimates well (a single condition each), not by
 * how few people all the filters together match, which it may not (two of
 * them can go together far less often than it assumes).
 */
export async function commonTextPath(db: SignonDatabase, search: UserSearch): Promise<boolean> {
  if (search.text === undefined || search.text === "") return false;
  const narrowed = indexedFilters(search);
  if (narrowed === null) return false;
  const holders = await estimateTextMatches(db, search.text);
  if (holders < commonTextMatches) return false;
  return (await estimateUsers(db, narrowed)) <= Math.min(narrowFiltersLimit, holders / 2);
}

/** PostgreSQL's estimate of how many people match (EXPLAIN of the list without its order and limit). */
export async function estimateUsers(db: SignonDatabase, search: UserSearch): Promise<number> {
  const everyone = db.select({ one: sql`1` }).from(users).leftJoin(organisations, eq(organisations.id, users.organisationId)).where(and(...conditions(search)));
  const explained = await db.execute<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }>(sql`explain (format json) ${everyone}`);
  return Math.round(explained.rows[0]?.["QUERY PLAN"][0].Plan["Plan Rows"] ?? 0);
}

/**
 * The counting query of `countUsers`, for EXPLAIN: the people matching every
 * filter, in no order, stopping at `exactUpTo + 1`. Asked only when PostgreSQL
 * estimates at most `exactUpTo`, it gets the plan PostgreSQL finds cheapest
 * for all of the filters together (the most selective index first), and,
 * with no order to sort by, stops reading as soon as it has counted past the
 * limit. Beside keeping sequential scans for when no index serves
 * (`inCountTransaction`), no plan is forced on it: the holders of a common
 * permission, say, are never its starting point unless they are the few.
 */
export function userCountQuery(db: SignonDatabase, search: UserSearch, exactUpTo: number): SQL {
  const limited = db
    .select({ one: sql`1` })
    .from(users)
    .leftJoin(organisations, eq(organisations.id, users.organisationId))
    .where(and(...conditions(search)))
    .limit(exactUpTo + 1);
  return db.select({ count: sql<number>`count(*)::int` }).from(limited.as("limited")).getSQL();
}

/** A user with the name of their organisation and whether it requires 2-step verification, or `null` when no user has this uid. */
export async function findUserWithOrganisation(
  db: SignonDatabase,
  uid: string,
): Promise<{ user: typeof users.$inferSelect; organisationName: string | null; organisationRequiresTwoStep: boolean | null } | null> {
  const [row] = await db
    .select({ user: users, organisationName: organisations.name, organisationRequiresTwoStep: organisations.twoStepRequired })
    .from(users)
    .leftJoin(organisations, eq(organisations.id, users.organisationId))
    .where(eq(users.uid, uid))
    .limit(1);
  return row ?? null;
}
