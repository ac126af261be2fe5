import { and, asc, eq, gt, inArray, isNotNull, isNull, lte, or, sql, type SQL } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { organisations, userPermissions, users } from "../db/schema.js";

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
  role?: string | undefined;
  /** An organisation id, or `null` for people without one. */
  organisationId?: string | null | undefined;
  status?: UserStatus | undefined;
  permission?: { applicationId: string; permission: string } | undefined;
  /** Locks set after this time still hold (S15: a lock lifts by itself after an hour). */
  locksSetAfter: Date;
  twoStep?: TwoStepFilter | undefined;
  /** What `missing` and `exempt` are measured against: the roles that must use 2-step verification, and now. */
  twoStepRules: { requiredRoles: readonly string[]; now: Date };
}

/** One person as the users list and its CSV export show them. */
export interface UserListRow {
  uid: string;
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
  const where: SQL[] = [eq(users.isApiUser, false), inArray(users.role, [...search.scopeRoles])];
  if (search.scopeOrganisationIds !== undefined) where.push(inArray(users.organisationId, [...search.scopeOrganisationIds]));
  if (search.text !== undefined && search.text !== "") {
    const pattern = `%${escapeLikePattern(search.text)}%`;
    where.push(sql`(${users.name} ilike ${pattern} escape '\\' or ${users.email} ilike ${pattern} escape '\\')`);
  }
  if (search.role !== undefined) where.push(eq(users.role, search.role));
  if (search.organisationId === null) where.push(isNull(users.organisationId));
  else if (search.organisationId !== undefined) where.push(eq(users.organisationId, search.organisationId));
  const locked = and(isNotNull(users.lockedAt), gt(users.lockedAt, search.locksSetAfter)) as SQL;
  switch (search.status) {
    case "suspended":
      where.push(isNotNull(users.suspendedAt));
      break;
    case "locked":
      where.push(locked);
      break;
    case "invited":
      where.push(isNull(users.passwordHash));
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

/**
 * People matching a search, by name then uid. `limit`: rows to return
 * (omit for all of them, as the CSV export does); `offset`: rows to skip.
 */
export async function searchUsers(db: SignonDatabase, search: UserSearch, page: { limit?: number; offset?: number } = {}): Promise<UserListRow[]> {
  const query = db
    .select({
      uid: users.uid,
      name: users.name,
      email: users.email,
      role: users.role,
      organisationName: organisations.name,
      suspendedAt: users.suspendedAt,
      lockedAt: users.lockedAt,
      hasPassword: sql<boolean>`(${users.passwordHash} is not null)`,
      lastSignedInAt: users.lastSignedInAt,
      createdAt: users.createdAt,
    })
    .from(users)
    .leftJoin(organisations, eq(organisations.id, users.organisationId))
    .where(and(...conditions(search)))
    .orderBy(asc(sql`lower(${users.name})`), asc(users.uid))
    .$dynamic();
  if (page.limit !== undefined) query.limit(page.limit);
  if (page.offset !== undefined) query.offset(page.offset);
  return query;
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
