import { and, asc, eq, inArray, isNotNull, isNull, ne, or, sql, type SQL } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { users } from "../db/schema.js";

/** People with one role, in any organisation (`organisationIds` absent) or in one of these. */
export interface AdministratorGroup {
  role: string;
  organisationIds?: readonly string[];
}

/**
 * Names and addresses of the people who can act now (not suspended, with a
 * password, not API users) in any of `groups`, other than `exceptUid`, by
 * name, at most `limit`.
 */
export async function listActiveAdministrators(
  db: SignonDatabase,
  groups: readonly AdministratorGroup[],
  exceptUid: string,
  limit: number,
): Promise<{ name: string; email: string }[]> {
  const conditions = groups
    .filter((group) => group.organisationIds === undefined || group.organisationIds.length > 0)
    .map((group) =>
      group.organisationIds === undefined ? eq(users.role, group.role) : and(eq(users.role, group.role), inArray(users.organisationId, [...group.organisationIds])),
    );
  if (conditions.length === 0) return [];
  return db
    .select({ name: users.name, email: users.email })
    .from(users)
    .where(and(or(...conditions) as SQL, eq(users.isApiUser, false), isNull(users.suspendedAt), isNotNull(users.passwordHash), ne(users.uid, exceptUid)))
    .orderBy(asc(sql`lower(${users.name})`), asc(users.uid))
    .limit(limit);
}
