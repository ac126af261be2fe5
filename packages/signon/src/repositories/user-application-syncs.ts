import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";

/** How an application last had a user's state: it fetched `/user.json`, or a push was delivered. */
export type SyncSource = "user_json" | "push";

/**
 * Records that an application has a user's current state, unless a record at
 * most `minimumGapSeconds` older already says so (so frequent `/user.json`
 * calls write about once a minute per pair, whichever instance answers them).
 */
export async function recordSync(
  db: SignonDatabase,
  sync: { userUid: string; applicationId: string; at: Date; by: SyncSource; minimumGapSeconds: number },
): Promise<void> {
  const at = sync.at.toISOString();
  await db.execute(sql`
    insert into signon.user_application_syncs as s (user_uid, application_id, last_synced_at, last_synced_by)
    values (${sync.userUid}::uuid, ${sync.applicationId}::uuid, ${at}::timestamptz, ${sync.by})
    on conflict (user_uid, application_id) do update
       set last_synced_at = excluded.last_synced_at, last_synced_by = excluded.last_synced_by
     where s.last_synced_at <= excluded.last_synced_at - make_interval(secs => ${sync.minimumGapSeconds})`);
}

/** When each application last had a user's state, for the user page. */
export interface UserSync {
  applicationId: string;
  application: string;
  lastSyncedAt: Date;
  lastSyncedBy: SyncSource;
}

/** Every application's last sync of a user, by application name. */
export async function listSyncsOfUser(db: SignonDatabase, userUid: string): Promise<UserSync[]> {
  const result = await db.execute<{ application_id: string; name: string; last_synced_at: Date | string; last_synced_by: SyncSource }>(sql`
    select s.application_id, a.name, s.last_synced_at, s.last_synced_by
      from signon.user_application_syncs s
      join signon.applications a on a.id = s.application_id
     where s.user_uid = ${userUid}::uuid
     order by lower(a.name), a.name`);
  return result.rows.map((row) => ({
    applicationId: row.application_id,
    application: row.name,
    lastSyncedAt: new Date(row.last_synced_at),
    lastSyncedBy: row.last_synced_by,
  }));
}
