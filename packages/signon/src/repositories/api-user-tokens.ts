import { and, eq, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { grants, users } from "../db/schema.js";
import { keysetClauses, type PagePosition } from "./keyset.js";
import type { User } from "./users.js";

/** A page of API users, by `lower(name)` then uid (keyset). */
export async function listApiUsers(db: SignonDatabase, position: PagePosition, limit: number): Promise<(User & { sortName: string })[]> {
  const sortName = sql<string>`lower(${users.name})`;
  const { where, orderBy } = keysetClauses(position, sortName, users.uid);
  // `is_api_user` alone, as the predicate of the partial index users_api_name_idx, which reads them in this order.
  const rows = await db
    .select({ user: users, sortName })
    .from(users)
    .where(and(sql`${users.isApiUser}`, where))
    .orderBy(...orderBy)
    .limit(limit);
  return rows.map((row) => ({ ...row.user, sortName: row.sortName }));
}

/** A token issued to a user by an operator, as the API user page lists it (never the token itself). */
export interface IssuedToken {
  /** The grant the token belongs to: what the revoke form names. */
  grantId: string;
  applicationId: string;
  application: string;
  /** What the user holds on that application now. */
  permissions: string[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** The tokens issued to a user by operators, newest first. */
export async function listIssuedTokens(db: SignonDatabase, userUid: string): Promise<IssuedToken[]> {
  const result = await db.execute<{
    id: string; application_id: string; application: string; permissions: string[];
    created_at: Date | string; expires_at: Date | string | null; revoked_at: Date | string | null;
  }>(sql`
    select g.id, g.application_id, a.name as application,
           array(select p.permission from signon.user_permissions p
                  where p.user_uid = g.user_uid and p.application_id = g.application_id order by p.permission) as permissions,
           g.created_at,
           (select max(t.expires_at) from signon.access_tokens t where t.grant_id = g.id) as expires_at,
           coalesce(g.revoked_at, (select min(t.revoked_at) from signon.access_tokens t where t.grant_id = g.id)) as revoked_at
      from signon.grants g
      join signon.applications a on a.id = g.application_id
     where g.user_uid = ${userUid}::uuid and g.kind = 'issued'
     order by g.created_at desc, g.id`);
  const at = (value: Date | string | null) => (value === null ? null : new Date(value));
  return result.rows.map((row) => ({
    grantId: row.id,
    applicationId: row.application_id,
    application: row.application,
    permissions: row.permissions,
    createdAt: new Date(row.created_at),
    expiresAt: at(row.expires_at),
    revokedAt: at(row.revoked_at),
  }));
}

/** An operator-issued grant of a user, or `null` when the user has no such grant. */
export async function findIssuedGrant(db: SignonDatabase, userUid: string, grantId: string): Promise<typeof grants.$inferSelect | null> {
  const [row] = await db
    .select()
    .from(grants)
    .where(and(eq(grants.id, grantId), eq(grants.userUid, userUid), eq(grants.kind, "issued")))
    .limit(1);
  return row ?? null;
}
