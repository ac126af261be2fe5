import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { takeOverEarlierPush } from "./push-deliveries.js";

/**
 * Whether application `a` knows person `u` as far as the restored database can tell: it issued them a token (an
 * exchanged code or a pre-issued token), they hold a permission there, or it was pushed something about them. After
 * a restore, what an application was told since the restore point may be newer than the database: all of these
 * hear again. (An application that first heard of someone after the restore point cannot be found here; that
 * person holds nothing there now, so it cannot sign them in.)
 */
const applicationOfPerson = sql`(exists (select 1 from signon.grants g
      where g.user_uid = u.uid and g.application_id = a.id and (g.kind = 'issued' or g.code_used_at is not null))
   or exists (select 1 from signon.user_permissions p where p.user_uid = u.uid and p.application_id = a.id)
   or exists (select 1 from signon.push_deliveries d where d.user_uid = u.uid and d.application_id = a.id))`;

/**
 * Queues pushes of `kind` for everyone (people only, with `onlyPeople`; never the push credential, which the
 * applications do not hold as a user), to each application that knows them, in one statement: `update` and
 * `reauth` where the application takes pushes, `logout` (a back-channel logout token) where it is an OpenID
 * Connect application that asked for them.
 */
async function queueForEveryone(db: SignonDatabase, kind: "update" | "reauth" | "logout", now: Date, onlyPeople: boolean, pushCredentialEmail: string): Promise<number> {
  const at = now.toISOString();
  const takesIt = kind === "logout" ? sql`a.backchannel_logout_uri is not null and 'openid' = any(a.oidc_scopes)` : sql`a.push_enabled`;
  const result = await db.execute(sql`
    insert into signon.push_deliveries as d
           (user_uid, application_id, kind, seq, status, attempts, pending_since, next_attempt_at, created_at, updated_at)
    select u.uid, a.id, ${kind}, nextval('signon.push_sequence'), 'pending', 0, ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
      from signon.users u
      join signon.applications a on not a.retired and ${takesIt}
     where u.email <> ${pushCredentialEmail} and ${onlyPeople ? sql`not u.is_api_user and` : sql``} ${applicationOfPerson}
    ${takeOverEarlierPush}`);
  return result.rowCount ?? 0;
}

/**
 * After a restore: queues an `update` push (the person's current details and permissions, as `PUT /users/{uid}`)
 * for everyone to each application that knows them (see `applicationOfPerson`), so that an application told of a change made after the restore point
 * (a permission granted, a name changed, a suspension) learns what Sign-on holds now. Returns how many were queued.
 */
export async function queueCurrentDetailsForEveryone(db: SignonDatabase, now: Date, pushCredentialEmail: string): Promise<number> {
  return queueForEveryone(db, "update", now, false, pushCredentialEmail);
}

/** What `signEveryoneOut` ended. */
export interface EveryoneSignedOut {
  sessions: number;
  accessTokens: number;
  refreshTokens: number;
  /** Sign-out pushes queued: `reauth` where the application takes pushes, a back-channel `logout` where it asked for them. */
  reauthPushes: number;
}

/**
 * After a restore, where the operator chooses: ends every Sign-on session, revokes every person's access and refresh
 * tokens (API users' pre-issued tokens are kept: an integration's token is not a sign-in), and queues a `reauth`
 * push for every person to each of their applications, so that a session ended or a token revoked after the
 * restore point, which the restore brought back, works nowhere. Inside the caller's transaction.
 */
export async function signEveryoneOut(db: SignonDatabase, now: Date, pushCredentialEmail: string): Promise<EveryoneSignedOut> {
  const at = now.toISOString();
  const sessions = await db.execute(sql`delete from signon.sessions`);
  const tokens = await db.execute<{ access_tokens: string | number; refresh_tokens: string | number }>(sql`
    with people_grants as (
      update signon.grants g set revoked_at = ${at}::timestamptz
        from signon.users u
       where u.uid = g.user_uid and not u.is_api_user and g.revoked_at is null
      returning g.id
    ), access as (
      update signon.access_tokens t set revoked_at = ${at}::timestamptz
       where t.grant_id in (select id from people_grants) and t.revoked_at is null
      returning 1
    ), refresh as (
      update signon.refresh_tokens t set revoked_at = ${at}::timestamptz
       where t.grant_id in (select id from people_grants) and t.revoked_at is null and t.rotated_at is null
      returning 1
    )
    select (select count(*) from access) as access_tokens, (select count(*) from refresh) as refresh_tokens`);
  const reauthPushes = (await queueForEveryone(db, "reauth", now, true, pushCredentialEmail)) + (await queueForEveryone(db, "logout", now, true, pushCredentialEmail));
  return {
    sessions: sessions.rowCount ?? 0,
    accessTokens: Number(tokens.rows[0]?.access_tokens ?? 0),
    refreshTokens: Number(tokens.rows[0]?.refresh_tokens ?? 0),
    reauthPushes,
  };
}
