import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";

/** Who relies on an application now: what retiring it, or replacing its secret, would stop. */
export interface ApplicationReach {
  /** People (not API users), not suspended, who hold `signin` on it; at most `reachCountLimit` + 1 (more are not counted). */
  peopleWhoMaySignIn: number;
  /** API users' issued tokens for it that still work (not revoked, not expired). */
  liveApiTokens: number;
}

/** Past this many people, the count stops: "more than 10,000" is all a confirmation page needs, and the count stays cheap at a million. */
export const reachCountLimit = 10_000;

/** How many people may sign in to an application (up to `reachCountLimit` + 1) and how many API tokens for it still work at `now`. */
export async function findApplicationReach(db: SignonDatabase, applicationId: string, now: Date): Promise<ApplicationReach> {
  const result = await db.execute<{ people: number; api_tokens: number }>(sql`
    select
      (select count(*)::int from (
         select 1
           from signon.user_permissions p
           join signon.users u on u.uid = p.user_uid
          where p.application_id = ${applicationId}::uuid and p.permission = 'signin'
            and not u.is_api_user and u.suspended_at is null
          limit ${reachCountLimit + 1}) as counted) as people,
      (select count(*)::int
         from signon.grants g
        where g.application_id = ${applicationId}::uuid and g.kind = 'issued' and g.revoked_at is null
          and exists (select 1 from signon.access_tokens t
                       where t.grant_id = g.id and t.revoked_at is null and t.expires_at > ${now.toISOString()}::timestamptz)) as api_tokens`);
  const row = result.rows[0];
  return { peopleWhoMaySignIn: row?.people ?? 0, liveApiTokens: row?.api_tokens ?? 0 };
}
