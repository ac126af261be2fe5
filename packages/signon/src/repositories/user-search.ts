import { and, asc, eq, gt, inArray, isNotNull, isNull, lte, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { organisations, userPermissions, users } from "../db/schema.js";
import { keysetClauses, type PagePosition } from "./keyset.js";
import { sqlStateOf } from "./unique-violation.js";
import type { ExportPlan, PagePlan, PermissionPlan, TextPlan } from "../user-search/plan.js";

/** Every role the `users_role_check` constraint allows. */
export const everyRole = ["superadmin", "admin", "super_organisation_admin", "organisation_admin", "normal"];

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
  /** Case-insensitive part of the name or e-mail address (or, as the plan says, a whole address). */
  text?: string | undefined;
  role?: string | undefined;
  /** An organisation id, or `null` for people without one. */
  organisationId?: string | null | undefined;
  status?: UserStatus | undefined;
  /** People holding this permission. */
  permission?: { applicationId: string; permission: string } | undefined;
  /** Locks set after this time still hold (S15: a lock lifts by itself after an hour). */
  locksSetAfter: Date;
  twoStep?: TwoStepFilter | undefined;
  /** What `missing` and `exempt` are measured against: the roles that must use 2-step verification, and now. */
  twoStepRules: { requiredRoles: readonly string[]; now: Date };
}

/** The parts of a plan (user-search/plan.ts) that decide how the filters are written. */
export interface FilterPlan {
  text: TextPlan;
  permission: PermissionPlan;
}

/** The filters written as PostgreSQL estimates them best: the trigram indexes for a text, `exists` for a permission. */
export const estimatedFilters: FilterPlan = { text: "trigram", permission: "holders" };

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

/** The longest text, in characters, that the index of short texts (`users_short_grams_idx`) holds. */
export const shortTextLength = 2;

/**
 * Whether a person's name or e-mail address holds a text of at most `shortTextLength` characters, as the index of
 * short texts finds it (the expression is the index's). Only narrows: the `ilike` beside it is the test.
 */
function shortGramsHold(text: string): SQL {
  return sql`signon.short_grams(${users.name}, ${users.email}) @> array[lower(${text})]::text[]`;
}

/** Escapes `%`, `_` and `\` so the text matches only itself inside a LIKE pattern. */
export function escapeLikePattern(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/** Whether the person's name or address holds the text, written as the plan reads it. */
function textCondition(text: string, plan: TextPlan): SQL[] {
  if (plan === "exact-address") return [sql`lower(${users.email}) = lower(${text})`];
  const pattern = `%${escapeLikePattern(text)}%`;
  const holds = sql`(${users.name} ilike ${pattern} escape '\\' or ${users.email} ilike ${pattern} escape '\\')`;
  // `is true` is no condition an index can serve, and PostgreSQL estimates it as the condition it tests: the
  // statistics stay, only the trigram indexes are out of the plan (they hold nothing to narrow a short text, and a
  // common one is a list of most people).
  if (plan === "tested") return [sql`(${holds} is true)`];
  if (plan === "short-grams") return [sql`(${holds} is true)`, shortGramsHold(text)];
  return [holds];
}

/**
 * Whether the person holds the permission: `exists`, which PostgreSQL may answer by hashing the holders (few), or a
 * lookup by primary key for each person found otherwise, in a subquery it cannot turn into a join (at 1M people,
 * hashing the 500,000 holders of `signin` took longer than the rest of the page).
 */
function permissionCondition(permission: { applicationId: string; permission: string }, plan: PermissionPlan): SQL {
  return plan === "looked-up"
    ? sql`(select true from ${userPermissions} where ${heldBy(permission)}) is not null`
    : sql`exists (select 1 from ${userPermissions} where ${heldBy(permission)})`;
}

/** The search's filters as SQL conditions on `users` (and `organisations`, joined), written as `plan` reads them. */
export function matchConditions(search: UserSearch, plan: FilterPlan): SQL[] {
  // Written as the partial indexes' predicate (`not is_api_user`), so that they serve the list.
  const where: SQL[] = [sql`not ${users.isApiUser}`];
  // Every role allowed is no condition at all (the check constraint knows no other), which leaves the indexes free.
  if (!everyRole.every((role) => search.scopeRoles.includes(role))) where.push(inArray(users.role, [...search.scopeRoles]));
  if (search.scopeOrganisationIds !== undefined) where.push(inArray(users.organisationId, [...search.scopeOrganisationIds]));
  if (search.text !== undefined && search.text !== "" && plan.text !== "none") where.push(...textCondition(search.text, plan.text));
  if (search.role !== undefined) where.push(eq(users.role, search.role));
  if (search.organisationId === null) where.push(isNull(users.organisationId));
  else if (search.organisationId !== undefined) where.push(eq(users.organisationId, search.organisationId));
  const status = statusCondition(search);
  if (status !== null) where.push(status);
  if (search.twoStep !== undefined) where.push(twoStepCondition(search.twoStep, search.twoStepRules, search.organisationId === null));
  if (search.permission && plan.permission !== "none") where.push(permissionCondition(search.permission, plan.permission));
  return where;
}

function statusCondition(search: UserSearch): SQL | null {
  switch (search.status) {
    case "suspended":
      return sql`${users.suspendedAt} is not null`;
    case "locked":
      return and(isNotNull(users.lockedAt), gt(users.lockedAt, search.locksSetAfter)) as SQL;
    case "invited":
      return sql`${users.passwordHash} is null`;
    case "active":
      return and(isNull(users.suspendedAt), isNotNull(users.passwordHash), or(isNull(users.lockedAt), lte(users.lockedAt, search.locksSetAfter))) as SQL;
    case undefined:
      return null;
  }
}

/**
 * The filters of a search that an index of `users` serves: the organisation (or none), the role, the scope, a
 * suspended, invited or locked status, a 2-step exemption; `null` when it has none.
 */
export function indexedFilters(search: UserSearch): UserSearch | null {
  const status = search.status === "suspended" || search.status === "invited" || search.status === "locked" ? search.status : undefined;
  // 2-step set up is a code or a passkey: no one index serves it. An exemption has an index of its own.
  const twoStep = search.twoStep === "exempt" ? search.twoStep : undefined;
  const narrowing = search.scopeOrganisationIds !== undefined || search.role !== undefined || search.organisationId !== undefined || status || twoStep;
  if (!narrowing) return null;
  return { ...search, text: undefined, permission: undefined, status, twoStep };
}

/** The row of `user_permissions` that says the person of the query's `users` row holds `permission`. */
function heldBy(permission: { applicationId: string; permission: string }): SQL {
  return sql`${userPermissions.userUid} = ${users.uid} and ${userPermissions.applicationId} = ${permission.applicationId} and ${userPermissions.permission} = ${permission.permission}`;
}

/**
 * The SQL of `twoStepRequirement` (accounts/two-step-mandate.ts): a required
 * role, or the organisation's or the person's own requirement without an
 * exemption that still applies. Needs `organisations` joined.
 */
function twoStepCondition(filter: TwoStepFilter, rules: SearchRules, withoutOrganisation: boolean): SQL {
  const exempt = and(isNotNull(users.twoStepExemptUntil), gt(users.twoStepExemptUntil, rules.now)) as SQL;
  const byRole = rules.requiredRoles.length === 0 ? sql`false` : inArray(users.role, [...rules.requiredRoles]);
  // For people without an organisation, only their own requirement: a condition on users alone, which PostgreSQL
  // estimates from its statistics (with the organisation's beside it, it took them to be 200 times as many).
  const requiredOfThem = withoutOrganisation ? sql`${users.twoStepRequired}` : sql`(${users.twoStepRequired} or coalesce(${organisations.twoStepRequired}, false))`;
  const required = sql`(${byRole} or (${requiredOfThem} and not ${exempt}))`;
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

/**
 * Set in the users list's page and count transactions: the planner may start parallel workers for a scan of a few
 * thousand people, and starting them costs more than they save in a page's budget of tens of milliseconds (a few
 * milliseconds a request on most machines, 43 ms measured on a virtual machine), while other requests need the cores.
 */
const withoutParallelWorkers = "set local max_parallel_workers_per_gather = 0";

/** Runs `work` in a transaction set up as a page of the users list is read (no parallel workers). */
export async function inPageTransaction<T>(db: SignonDatabase, work: (tx: SignonDatabase) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql.raw(withoutParallelWorkers));
    return work(tx as unknown as SignonDatabase);
  });
}

/** One page of the people matching a search, read as its plan says (`userPageQuery`). */
export async function searchUsers(db: SignonDatabase, search: UserSearch, plan: PagePlanOf, position: PagePosition, limit: number): Promise<UserListRow[]> {
  return inPageTransaction(db, (tx) => userPageQuery(tx, search, plan, position, limit));
}

/** The parts of a plan a page needs. */
export type PagePlanOf = FilterPlan & { page: PagePlan };

/** The holders of a permission, through its index, as a subquery to start from. */
function holdersOf(db: SignonDatabase, permission: { applicationId: string; permission: string }) {
  return db
    .select({ uid: userPermissions.userUid })
    .from(userPermissions)
    .where(and(eq(userPermissions.applicationId, permission.applicationId), eq(userPermissions.permission, permission.permission)))
    .as("holders");
}

/**
 * The query of a page of the people matching a search, by `lower(name)` then uid: `limit` rows from the start, after
 * or before a row's key, or at the end (the last two read backwards: the caller reverses them). `name-order` walks an
 * index of that order; `sorted-matches` writes the order as no index has it, so that the matches are found through
 * the filters' indexes and sorted; `permission-holders` starts from the permission's holders.
 */
export function userPageQuery(db: SignonDatabase, search: UserSearch, plan: PagePlanOf, position: PagePosition, limit: number) {
  const sortName = plan.page === "sorted-matches" ? sql`(lower(${users.name}) || '')` : sql`lower(${users.name})`;
  const { where, orderBy } = keysetClauses(position, sortName, users.uid);
  const keyset = where === undefined ? [] : [where];
  if (plan.page === "permission-holders" && search.permission !== undefined) {
    const holders = holdersOf(db, search.permission);
    // Each holder looked up by primary key (`limit 1` keeps the lateral subquery a lookup per holder; a uid is one person).
    const person = db
      .select({ ...listFields, sortName: sql<string>`lower(${users.name})`.as("sort_name"), organisationName: sql<string | null>`${organisations.name}`.as("organisation_name"), hasPassword: sql<boolean>`(${users.passwordHash} is not null)`.as("has_password") })
      .from(users)
      .leftJoin(organisations, eq(organisations.id, users.organisationId))
      .where(and(eq(users.uid, holders.uid), ...matchConditions(search, { ...plan, permission: "none" }), ...keyset))
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
  return db
    .select(listFields)
    .from(users)
    .leftJoin(organisations, eq(organisations.id, users.organisationId))
    .where(and(...matchConditions(search, plan), ...keyset))
    .orderBy(...orderBy)
    .limit(limit)
    .$dynamic();
}

/**
 * Every person matching a search, by `lower(name)` then uid, as one SQL
 * statement for a server-side cursor, read as the plan's `export` says; each row is an array in the order of
 * `UserListRow`'s fields (`toUserExportRow`).
 */
export function allUsersStatement(db: SignonDatabase, search: UserSearch, plan: FilterPlan & { export: ExportPlan }): { text: string; values: unknown[] } {
  // Sorted: the order written as no index has it, so that the table is read in its own order and sorted.
  const sortName = plan.export === "sorted" ? sql`(lower(${users.name}) || '')` : sql`lower(${users.name})`;
  const { sql: text, params } = db
    .select({
      ...listFields,
      // Each person's permissions as `<application id>:<permission>`, as the primary key's index gives them: the CSV sorts
      // each cell (a sort a person in the database cost more than the rest of their row: 1M sorts of one or two rows).
      permissions: sql<string[]>`array(select ${userPermissions.applicationId}::text || ':' || ${userPermissions.permission} from ${userPermissions} where ${userPermissions.userUid} = ${users.uid})`,
    })
    .from(users)
    .leftJoin(organisations, eq(organisations.id, users.organisationId))
    .where(and(...matchConditions(search, plan)))
    .orderBy(asc(sortName), asc(users.uid))
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

/** The most time the count of a list may take (a database statement timeout); past it, the list shows the estimate. */
export const countBudgetMs = 100;

/**
 * How many people match, one by one, stopping at `upTo + 1`, under a statement timeout of `budgetMs`: the number
 * counted, or `null` when the count ran past its time.
 */
export async function countMatches(db: SignonDatabase, search: UserSearch, plan: FilterPlan, upTo: number, budgetMs = countBudgetMs): Promise<number | null> {
  try {
    return await inCountTransaction(db, budgetMs, async (tx) => {
      const counted = await tx.execute<{ count: number }>(userCountQuery(tx, search, plan, upTo));
      return counted.rows[0]?.count ?? 0;
    });
  } catch (error) {
    // 57014: cancelled by the statement timeout.
    if (sqlStateOf(error) === "57014") return null;
    throw error;
  }
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
    await tx.execute(sql.raw(withoutParallelWorkers));
    return work(tx as unknown as SignonDatabase);
  });
}

/**
 * The counting query: the people matching every filter, in no order, stopping at `upTo + 1`. PostgreSQL picks the
 * most selective index for the filters together and, with no order to sort by, stops reading as soon as it has
 * counted past the limit. A permission's few holders are its starting point, each looked up by primary key; a common
 * permission is looked up for each person found otherwise.
 */
export function userCountQuery(db: SignonDatabase, search: UserSearch, plan: FilterPlan, upTo: number): SQL {
  if (plan.permission === "holders" && search.permission !== undefined) {
    const holders = holdersOf(db, search.permission);
    // As the page reads them: each holder looked up by primary key (`limit 1` keeps it a lookup, never a hash of
    // everyone the other filters find: 100,000 invited people read for 5,000 holders of `editor` took 230 ms).
    const person = db
      .select({ one: sql`1`.as("one") })
      .from(users)
      .leftJoin(organisations, eq(organisations.id, users.organisationId))
      .where(and(eq(users.uid, holders.uid), ...matchConditions(search, { ...plan, permission: "none" })))
      .limit(1)
      .as("person");
    const limited = db.select({ one: person.one }).from(holders).crossJoinLateral(person).limit(upTo + 1);
    return db.select({ count: sql<number>`count(*)::int` }).from(limited.as("limited")).getSQL();
  }
  const limited = db
    .select({ one: sql`1` })
    .from(users)
    .leftJoin(organisations, eq(organisations.id, users.organisationId))
    .where(and(...matchConditions(search, plan)))
    .limit(upTo + 1);
  return db.select({ count: sql<number>`count(*)::int` }).from(limited.as("limited")).getSQL();
}

/** About this many rows of `users` are read for a sample (all of them in a smaller table). */
export const sampledRows = 5_000;

/**
 * A sample of the table's pages (`TABLESAMPLE SYSTEM`, the same pages at every call, about `rows` rows): the rows
 * read and the people among them matching every filter, and the table's size as last analysed. Work bounded by the
 * sample, and unbiased whatever the filters, whose correlations PostgreSQL's statistics cannot know. A text is tested
 * with `ilike` alone on each sampled row; a permission is tested as `permission` says (user-search/plan.ts).
 */
export async function sampleUsers(
  db: SignonDatabase,
  search: UserSearch,
  permission: Exclude<PermissionPlan, "none"> = "looked-up",
  rows = sampledRows,
): Promise<{ rows: number; matches: number; tableRows: number }> {
  const tableRows = sql`(select greatest(reltuples, 0)::float8 from pg_class where oid = 'signon.users'::regclass)`;
  const percent = sql`(select least(100, 100.0 * ${rows} / greatest(reltuples, 1))::float8 from pg_class where oid = 'signon.users'::regclass)`;
  const matching = and(...matchConditions(search, { text: "tested", permission }));
  const sampled = await db.execute<{ rows: number; matches: number; table_rows: number }>(sql`
    select count(*)::int as rows, (count(*) filter (where ${matching}))::int as matches, ${tableRows} as table_rows
      from ${users} tablesample system (${percent}) repeatable (1)
      left join ${organisations} on ${organisations.id} = ${users.organisationId}`);
  const row = sampled.rows[0];
  return { rows: row?.rows ?? 0, matches: row?.matches ?? 0, tableRows: Math.round(Number(row?.table_rows ?? 0)) };
}

/** PostgreSQL's estimate of the rows a query returns (EXPLAIN's "Plan Rows"). */
async function estimatedRows(db: SignonDatabase, query: SQLWrapper): Promise<number> {
  const explained = await db.execute<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }>(sql`explain (format json) ${query}`);
  return Math.round(explained.rows[0]?.["QUERY PLAN"][0].Plan["Plan Rows"] ?? 0);
}

/** PostgreSQL's estimate of the people matching a search, its filters written as `plan` says. */
export async function estimateUsers(db: SignonDatabase, search: UserSearch, plan: FilterPlan = estimatedFilters): Promise<number> {
  return estimatedRows(db, db.select({ one: sql`1` }).from(users).leftJoin(organisations, eq(organisations.id, users.organisationId)).where(and(...matchConditions(search, plan))));
}

/** PostgreSQL's estimate of how many people (not API users) hold a search text in their name or e-mail address. */
export async function estimateTextHolders(db: SignonDatabase, text: string): Promise<number> {
  return estimateUsers(db, { scopeRoles: everyRole, text, locksSetAfter: new Date(0), twoStepRules: { requiredRoles: [], now: new Date(0) } });
}

/** PostgreSQL's estimate of how many people hold a permission (the permission's index). */
export async function estimatePermissionHolders(db: SignonDatabase, permission: { applicationId: string; permission: string }): Promise<number> {
  return estimatedRows(
    db,
    db
      .select({ one: sql`1` })
      .from(userPermissions)
      .where(and(eq(userPermissions.applicationId, permission.applicationId), eq(userPermissions.permission, permission.permission))),
  );
}

/** PostgreSQL's estimate of how many people hold a text of one or two characters, from the index of short texts. */
export async function estimateShortTextHolders(db: SignonDatabase, text: string): Promise<number> {
  return estimatedRows(db, db.select({ one: sql`1` }).from(users).where(and(sql`not ${users.isApiUser}`, shortGramsHold(text))));
}

/** Whether a person matching the search's other filters has the text as their whole address (the unique index on `lower(email)`). */
export async function addressHeld(db: SignonDatabase, search: UserSearch & { text: string }): Promise<boolean> {
  const [row] = await db
    .select({ one: sql`1` })
    .from(users)
    .leftJoin(organisations, eq(organisations.id, users.organisationId))
    .where(and(...matchConditions(search, { text: "exact-address", permission: "holders" })))
    .limit(1);
  return row !== undefined;
}

/** The people (API users aside) of an organisation: its member count kept exact on its row, less its API users. */
export async function organisationPeople(db: SignonDatabase, organisationId: string): Promise<number | undefined> {
  const result = await db.execute<{ people: number }>(sql`
    select ${organisations.memberCount} - (select count(*)::int from ${users} where ${users.isApiUser} and ${users.organisationId} = ${organisations.id}) as people
      from ${organisations} where ${organisations.id} = ${organisationId}`);
  return result.rows[0]?.people;
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
