import { and, asc, eq, isNull, lte, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { users } from "../db/schema.js";

/**
 * People (not API users) who are not suspended and whose last sign-in (or,
 * if they never signed in, their account's creation) is at or before `cutoff`.
 */
export async function findInactivePeople(db: SignonDatabase, cutoff: Date): Promise<{ uid: string; email: string }[]> {
  return db
    .select({ uid: users.uid, email: users.email })
    .from(users)
    .where(
      and(
        eq(users.isApiUser, false),
        isNull(users.suspendedAt),
        lte(sql`coalesce(${users.lastSignedInAt}, ${users.createdAt})`, cutoff),
      ),
    )
    .orderBy(asc(users.createdAt));
}
