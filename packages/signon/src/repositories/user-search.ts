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
  /**
   * Few people match, and the indexes of the filters find them in little work (`fewMatchesPath`): the page reads
   * them all and sorts them, as for a common text. Walking the order of names instead reads about `limit` × people
   * / matches people, which PostgreSQL underrates when its estimate of the matches is high by a little (at 1M
   * people, `smith` without an organisation and with `signin`: 86,000 names read for a page of 570 matches).
   */
  fewMatches?: boolean | undefined;
  /** The sample of the table already read for this search (`fewMatchesPath`), which `countUsers` uses rather than read it again. */
  sample?: UserSample | undefined;
  /**
   * The text is one or two characters that few people hold (`shortTextIndexLimit`): it is also looked up in the
   * index of every character and pair of characters (`signon.short_grams`), as no trigram narrows it.
   */
  shortText?: boolean | undefined;
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
    // A short text: the trigram indexes, which hold nothing to narrow it, are kept out of the plan as for a common one.
    where.push(search.commonText === true || search.shortText === true ? sql`(${holds} is true)` : holds);
    if (search.shortText === true) where.push(shortGramsHold(search.text));
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
  if (search.twoStep !== undefined) where.push(twoStepCondition(search.twoStep, search.twoStepRules, search.organisationId === null));
  if (search.permission) where.push(sql`exists (select 1 from ${userPermissions} where ${heldBy(search.permission)})`);
  return where;
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
  return inPageTransaction(db, (tx) => userPageQuery(tx, search, position, limit));
}

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
  // For a common text or few matches, the order of names written as no index has it: the page is sorted from what the
  // filters find.
  const sortName = search.commonText === true || search.fewMatches === true ? sql`(lower(${users.name}) || '')` : sql`lower(${users.name})`;
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
  /** The estimate stands in for a count that ran past its time: `count` is the sample's estimate. */
  tooSlowToCount: boolean;
}

/** The most time the count of a list may take (a database statement timeout); past it, the list shows the estimate. */
export const countBudgetMs = 100;

/**
 * How many people match, in work bounded whatever the filters. A sample of the table first (`sampleUsers`): when
 * even the low end of its estimate is over `exactUpTo` (`sampleSettlesOver`), its estimate is the answer ("about
 * N"). Otherwise the people are counted one by one (`userCountQuery`), stopping at `exactUpTo + 1`, under a statement
 * timeout of `budgetMs`: at most `exactUpTo` is the exact answer, whatever PostgreSQL's statistics expect, so an
 * estimate never stands in for a count the list could give. Past `exactUpTo`, the sample's estimate when it agrees
 * that more match, else "more than `exactUpTo`", which the count proved. Filters whose matches no index finds (a rare
 * combination of common ones) would make the count read everyone: past its budget, the sample's estimate is the
 * answer, said to be one. A sample, not the planner's statistics: those take filters to be independent, and
 * several together (2-step required but not set up, beside an organisation) were 5 to 200 times off.
 */
export async function countUsers(db: SignonDatabase, search: UserSearch, exactUpTo: number, budgetMs = countBudgetMs): Promise<UserCount> {
  const sampled = search.sample ?? (await sampleUsers(db, search));
  if (sampleSettlesOver(sampled, exactUpTo)) return { count: sampled.estimate, exact: false, moreThan: false, tooSlowToCount: false };
  let count: number;
  try {
    count = await inCountTransaction(db, budgetMs, async (tx) => {
      const counted = await tx.execute<{ count: number }>(userCountQuery(tx, search, exactUpTo));
      return counted.rows[0]?.count ?? 0;
    });
  } catch (error) {
    // 57014: cancelled by the statement timeout.
    if (sqlStateOf(error) === "57014") return { count: sampled.estimate, exact: false, moreThan: false, tooSlowToCount: true };
    throw error;
  }
  if (count <= exactUpTo) return { count, exact: true, moreThan: false, tooSlowToCount: false };
  return sampled.estimate > exactUpTo
    ? { count: sampled.estimate, exact: false, moreThan: false, tooSlowToCount: false }
    : { count: exactUpTo, exact: false, moreThan: true, tooSlowToCount: false };
}

/** What `sampleUsers` found: the people matching among the rows it read, and that scaled up to the whole table. */
export interface UserSample {
  matches: number;
  estimate: number;
}

/**
 * Whether a sample proves that more than `limit` people match, so that counting them one by one (which cannot
 * stop before `limit + 1`, and at a text no index narrows reads a large part of the table for it) would only
 * confirm it. The sample's matches are taken as a Poisson count: its estimate less `sampleDeviations` standard
 * deviations (the square root of the matches) must still be over the limit. At 5,000 rows sampled from 1M, an
 * estimate of about 16,000 or more (80 matches) settles a limit of 10,000; 10,000 is never settled by the sample.
 */
export function sampleSettlesOver(sample: UserSample, limit: number): boolean {
  if (sample.matches === 0) return false;
  const low = sample.estimate * (1 - sampleDeviations / Math.sqrt(sample.matches));
  return low > limit;
}

/** How many standard deviations below its estimate a sample must still be over the count's limit. */
export const sampleDeviations = 3;

/** About this many rows of `users` are read for `sampleUsers` (all of them in a smaller table). */
export const sampledRows = 5_000;

/**
 * An estimate of how many people match, from a sample of the table's pages (`TABLESAMPLE SYSTEM`, the same pages
 * at every call, about `sampledRows` rows): the matches among them, scaled up. Work bounded by the sample, and
 * unbiased whatever the filters, whose correlations the planner's statistics cannot know. A text is tested with
 * `ilike` alone on each sampled row (the index of short texts' expression would cost more than the test).
 */
export async function sampleUsers(db: SignonDatabase, search: UserSearch): Promise<UserSample> {
  // The share of the table's pages to read, from its size as last analysed (the whole of a small or new table).
  const percent = sql`(select least(100, 100.0 * ${sampledRows} / greatest(reltuples, 1))::float8 from pg_class where oid = 'signon.users'::regclass)`;
  // A common permission is looked up for each sampled person (its primary key), in a subquery PostgreSQL cannot make
  // a join of: work in proportion to the sample. As `exists`, the planner hashed every holder instead (half a million
  // at 1M people for signin, in parallel workers), work that grows with the table. A permission few hold stays
  // `exists`: hashing its holders (at most `fewHoldersLimit`) costs less than a lookup per sampled person.
  const { permission } = search;
  const lookedUp = permission !== undefined && permission.fewHolders !== true;
  const holdsPermission = lookedUp ? [sql`(select true from ${userPermissions} where ${heldBy(permission)}) is not null`] : [];
  const sampled = await db.execute<{ matches: number; estimate: number }>(sql`
    select count(*)::int as matches, round(count(*) * 100 / ${percent})::int as estimate
      from ${users} tablesample system (${percent}) repeatable (1)
      left join ${organisations} on ${organisations.id} = ${users.organisationId}
     where ${and(...conditions({ ...search, permission: lookedUp ? undefined : permission, shortText: false, commonText: false, fewMatches: false }), ...holdsPermission)}`);
  return sampled.rows[0] ?? { matches: 0, estimate: 0 };
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
 * From this many people holding a search text (by PostgreSQL's estimate), it
 * is common: reading it from the trigram indexes means reading a list of
 * them all (at 1M people, the 250,000 addresses that hold `example.org` took
 * 56 to 104 ms before any other filter applied).
 */
export const commonTextMatches = 20_000;

/**
 * At most this many people found by the other filters' indexes (by estimate) are tested one by one for a common
 * text. Each is a heap page read at random: at 1M people the 50,000 without an organisation took 600 ms, where
 * walking the order of names finds a page among the first thousand people read.
 */
export const narrowFiltersLimit = 20_000;

/**
 * Up to this many people holding a text of one or two characters (by PostgreSQL's estimate from the index of
 * short texts), a page reads them through that index and sorts them: work in proportion to the holders. More
 * hold it, and walking the order of names finds a page sooner (about `limit` × people / holders people read).
 */
export const shortTextIndexLimit = 10_000;

/** PostgreSQL's estimate of how many people hold a text of one or two characters, from the index of short texts. */
export async function estimateShortTextHolders(db: SignonDatabase, text: string): Promise<number> {
  const holders = db.select({ one: sql`1` }).from(users).where(and(sql`not ${users.isApiUser}`, shortGramsHold(text)));
  const explained = await db.execute<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }>(sql`explain (format json) ${holders}`);
  return Math.round(explained.rows[0]?.["QUERY PLAN"][0].Plan["Plan Rows"] ?? 0);
}

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

/** Up to this many people matching, by PostgreSQL's estimate and by the sample's, a page may sort them (`fewMatchesPath`). */
export const fewMatchesLimit = 2_000;

/**
 * The most a sorted first page may cost, in PostgreSQL's units (`seq_page_cost` 1), for `fewMatchesPath` to choose
 * it: the indexes of the filters find about 10,000 people or fewer. Reading everyone costs about 150,000.
 */
export const sortedPageCostLimit = 40_000;

/**
 * Whether a page reads every match and sorts them (`UserSearch.fewMatches`): PostgreSQL and a sample of the table
 * (`sampleUsers`) both expect at most `fewMatchesLimit` people to match, and PostgreSQL's plan for the sorted page
 * costs at most `sortedPageCostLimit` (the filters' indexes narrow it; a combination of filters no index serves
 * would be a scan of everyone, and walks the order of names instead). A common text, a permission's few holders
 * and an exact address have paths of their own. The sample, when it was read, comes back for the count.
 */
export async function fewMatchesPath(db: SignonDatabase, search: UserSearch): Promise<{ fewMatches: boolean; sample?: UserSample }> {
  if (search.commonText === true || search.permission?.fewHolders === true || search.exactEmail !== undefined) return { fewMatches: false };
  if ((await estimateUsers(db, search)) > fewMatchesLimit) return { fewMatches: false };
  const sample = await sampleUsers(db, search);
  if (sample.estimate > fewMatchesLimit) return { fewMatches: false, sample };
  const sorted = userPageQuery(db, { ...search, fewMatches: true }, { kind: "first" }, 51);
  const explained = await db.execute<{ "QUERY PLAN": [{ Plan: { "Total Cost": number } }] }>(sql`explain (format json) ${sorted}`);
  return { fewMatches: (explained.rows[0]?.["QUERY PLAN"][0].Plan["Total Cost"] ?? Infinity) <= sortedPageCostLimit, sample };
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
  if (search.permission?.fewHolders === true) {
    // As the page reads them: the permission's few holders, each looked up by primary key and tested for the rest.
    const holders = db
      .select({ one: sql`1` })
      .from(userPermissions)
      .innerJoin(users, eq(users.uid, userPermissions.userUid))
      .leftJoin(organisations, eq(organisations.id, users.organisationId))
      .where(
        and(
          eq(userPermissions.applicationId, search.permission.applicationId),
          eq(userPermissions.permission, search.permission.permission),
          ...conditions({ ...search, permission: undefined }),
        ),
      )
      .limit(exactUpTo + 1);
    return db.select({ count: sql<number>`count(*)::int` }).from(holders.as("limited")).getSQL();
  }
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
