import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";

/** How many rows of each kind one clean-up removed. */
export interface ExpiredRecordCounts {
  sessions: number;
  rememberedBrowsers: number;
  failureCounters: number;
  accessTokens: number;
  unusedCodes: number;
  accountLinks: number;
  emailChanges: number;
  passkeyChallenges: number;
  upstreamSignIns: number;
  upstreamMessages: number;
}

/** Account links and e-mail change links stay this long after they expire, so that a late click is told "expired", not "unknown". */
export const ACCOUNT_LINK_KEEP_SECONDS = 30 * 24 * 3600;

async function deleted(db: SignonDatabase, statement: ReturnType<typeof sql>): Promise<number> {
  const result = await db.execute(statement);
  return result.rowCount ?? 0;
}

/**
 * Deletes what can no longer be used at `now`: sessions past their maximum
 * or idle time, remembered browsers and brute-force counters whose time is
 * up, access tokens of the sign-in flow that have expired (operator-issued
 * ones stay, as their list shows when they expired), authorization codes
 * that expired unused, passkey challenges never answered, sign-ins sent to an organisation's provider that never came
 * back, logout tokens past the time a replay of them could be accepted, and account links
 * and e-mail change links (confirmed or not) a month after they expired.
 * Each is one statement; nothing here is read again once expired, so a
 * clean-up that stops half way loses nothing.
 */
export async function deleteExpiredRecords(db: SignonDatabase, now: Date, sessionIdleSeconds: number): Promise<ExpiredRecordCounts> {
  const at = now.toISOString();
  const idleSince = new Date(now.getTime() - sessionIdleSeconds * 1000).toISOString();
  const linksBefore = new Date(now.getTime() - ACCOUNT_LINK_KEEP_SECONDS * 1000).toISOString();
  return {
    sessions: await deleted(
      db,
      sql`delete from signon.sessions where expires_at <= ${at}::timestamptz or last_seen_at <= ${idleSince}::timestamptz`,
    ),
    rememberedBrowsers: await deleted(db, sql`delete from signon.remembered_browsers where expires_at <= ${at}::timestamptz`),
    failureCounters:
      (await deleted(db, sql`delete from signon.failure_counters where window_ends_at <= ${at}::timestamptz`)) +
      (await deleted(
        db,
        sql`delete from signon.sign_in_failures
             where window_ends_at <= ${at}::timestamptz and (blocked_until is null or blocked_until <= ${at}::timestamptz)`,
      )),
    accessTokens: await deleted(
      db,
      sql`delete from signon.access_tokens t using signon.grants g
           where g.id = t.grant_id and g.kind = 'authorization_code' and t.expires_at <= ${at}::timestamptz`,
    ),
    unusedCodes: await deleted(
      db,
      sql`delete from signon.grants
           where kind = 'authorization_code' and code_used_at is null and code_expires_at <= ${at}::timestamptz
             and not exists (select 1 from signon.access_tokens t where t.grant_id = grants.id)
             and not exists (select 1 from signon.refresh_tokens r where r.grant_id = grants.id)`,
    ),
    accountLinks: await deleted(db, sql`delete from signon.account_links where expires_at <= ${linksBefore}::timestamptz`),
    emailChanges: await deleted(db, sql`delete from signon.email_changes where expires_at <= ${linksBefore}::timestamptz`),
    passkeyChallenges: await deleted(db, sql`delete from signon.passkey_challenges where expires_at <= ${at}::timestamptz`),
    upstreamSignIns: await deleted(db, sql`delete from signon.upstream_sign_ins where expires_at <= ${at}::timestamptz`),
    upstreamMessages: await deleted(db, sql`delete from signon.upstream_messages_seen where expires_at <= ${at}::timestamptz`),
  };
}
