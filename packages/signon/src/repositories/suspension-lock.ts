import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";

/**
 * Locks the person's row for the caller's transaction if they are not suspended; `false` when they already are (or
 * are gone). Two suspensions of one person at once, such as the inactivity jobs of two instances, take turns here,
 * and the second finds the first's: the person is suspended, audited and pushed about once.
 */
export async function lockUnsuspendedUser(db: SignonDatabase, uid: string): Promise<boolean> {
  const result = await db.execute(sql`select 1 from signon.users where uid = ${uid}::uuid and suspended_at is null for update`);
  return result.rows.length > 0;
}
