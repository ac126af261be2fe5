import { eq, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { applications, failureCounters } from "../db/schema.js";
import type { Application } from "./applications.js";

/**
 * The application with a client id, and until when failed attempts block
 * authentication under `keys` (the latest end among windows holding at least
 * `maxFailures`), read together: one round trip for every client-authenticated
 * request. `application` is `null` for an unknown client id.
 */
export async function findClientForAuthentication(
  db: SignonDatabase,
  clientId: string,
  keys: readonly string[],
  maxFailures: number,
  now: Date,
): Promise<{ application: Application | null; blockedUntil: Date | null }> {
  const blockedUntil = sql<Date | null>`(
    select max(${failureCounters.windowEndsAt}) from ${failureCounters}
     where ${failureCounters.key} in (${sql.join(keys.map((key) => sql`${key}`), sql`, `)})
       and ${failureCounters.windowEndsAt} > ${now.toISOString()}::timestamptz
       and ${failureCounters.failures} >= ${maxFailures})`.mapWith((value: string | Date | null) => (value === null ? null : new Date(value)));
  const [row] = await db
    .select({ application: applications, blockedUntil })
    .from(sql`(select 1) as one`)
    .leftJoin(applications, eq(applications.clientId, clientId));
  return { application: row?.application ?? null, blockedUntil: row?.blockedUntil ?? null };
}
