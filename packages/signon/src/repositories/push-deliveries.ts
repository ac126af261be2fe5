import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";

/**
 * What a push does: `update` is `PUT /users/{uid}`, `reauth` is `POST /users/{uid}/reauth` (S13);
 * `logout` is an OpenID Connect back-channel logout token posted to the application's `backchannel_logout_uri`.
 */
export type PushKind = "update" | "reauth" | "logout";
export type PushStatus = "pending" | "delivered" | "failed";

/**
 * Which applications hear of a change of a person that is not a permission change (details, suspension, sign-out):
 * `token`, those that have issued them a token (row 23, the default); `token-or-permission`, those too and every
 * application where they hold a permission, used or not (`SIGNON_PUSH_FAN_OUT`).
 */
export type PushFanOut = "token" | "token-or-permission";

/** Which applications a queued push goes to. */
export type PushTargets =
  /** Exactly these applications (a permission changed there). */
  | { applicationIds: readonly string[] }
  /** The applications of the user, as `PushFanOut` says. */
  | { applicationsOfUser: PushFanOut };

/**
 * Whether application `a` has issued the user a token: an exchanged authorization code or a pre-issued token. A grant
 * whose code was never exchanged issued none (its row goes once the code expires); a revoked one did.
 */
function issuedTheUserAToken(userUid: string) {
  return sql`exists (select 1 from signon.grants g
    where g.user_uid = ${userUid}::uuid and g.application_id = a.id and (g.kind = 'issued' or g.code_used_at is not null))`;
}

/** Whether application `a` is one of the user's as `fanOut` counts them. */
function applicationOfUser(userUid: string, fanOut: PushFanOut) {
  if (fanOut === "token") return issuedTheUserAToken(userUid);
  return sql`(${issuedTheUserAToken(userUid)}
    or exists (select 1 from signon.user_permissions p where p.user_uid = ${userUid}::uuid and p.application_id = a.id))`;
}

/**
 * The names of the applications a change of the user's details, a suspension or a sign-out is pushed to (not retired,
 * pushes on), by name, by the rule `queuePushes` queues by: what a confirmation page says will be told, and what the
 * events of a suspension and of a sign-out everywhere record as told (in the words of `pushes/fan-out-words.ts`).
 */
export async function listApplicationsPushedAboutUser(db: SignonDatabase, userUid: string, fanOut: PushFanOut): Promise<string[]> {
  const result = await db.execute<{ name: string }>(sql`
    select a.name from signon.applications a
     where not a.retired and a.push_enabled and ${applicationOfUser(userUid, fanOut)}
     order by lower(a.name), a.name`);
  return result.rows.map((row) => row.name);
}

/**
 * What a queued push does to an earlier row of the same (user, application, kind): takes it over with its higher
 * sequence number and a fresh retry window, whatever its status (one row each, the newest state wins).
 */
export const takeOverEarlierPush = sql`on conflict (user_uid, application_id, kind) do update
   set seq = excluded.seq, status = 'pending', attempts = 0, pending_since = excluded.pending_since,
       next_attempt_at = excluded.next_attempt_at, last_error = null, delivered_at = null, updated_at = excluded.updated_at`;

/**
 * Queues pushes of `kinds`, in that order, for a user, inside the caller's
 * transaction. Each (user, application, kind) has one row: a newer push of
 * the same kind takes it over with a higher sequence number and a fresh
 * retry window, whatever its status. Retired applications, and those whose
 * pushes are switched off, are skipped.
 * Returns how many rows were written.
 */
export async function queuePushes(
  db: SignonDatabase,
  push: { userUid: string; kinds: readonly PushKind[]; targets: PushTargets; now: Date },
): Promise<number> {
  const now = push.now.toISOString();
  const where =
    "applicationsOfUser" in push.targets
      ? applicationOfUser(push.userUid, push.targets.applicationsOfUser)
      : sql`a.id = any(${`{${push.targets.applicationIds.join(",")}}`}::uuid[])`;
  let written = 0;
  // One statement per kind, in order, so a reauth queued with an update gets the higher number.
  for (const kind of push.kinds) {
    const result = await db.execute(sql`
      insert into signon.push_deliveries as d
             (user_uid, application_id, kind, seq, status, attempts, pending_since, next_attempt_at, created_at, updated_at)
      select ${push.userUid}::uuid, a.id, ${kind}, nextval('signon.push_sequence'), 'pending', 0,
             ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
        from signon.applications a
       where not a.retired and a.push_enabled and ${where}
      ${takeOverEarlierPush}`);
    written += result.rowCount ?? 0;
    if (kind !== "reauth") continue;
    // With each reauth, a back-channel logout token to the OpenID Connect applications that asked for them
    // (whether or not they take the draft-22 pushes).
    const logouts = await db.execute(sql`
      insert into signon.push_deliveries as d
             (user_uid, application_id, kind, seq, status, attempts, pending_since, next_attempt_at, created_at, updated_at)
      select ${push.userUid}::uuid, a.id, 'logout', nextval('signon.push_sequence'), 'pending', 0,
             ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
        from signon.applications a
       where not a.retired and a.backchannel_logout_uri is not null and 'openid' = any(a.oidc_scopes) and ${where}
      ${takeOverEarlierPush}`);
    written += logouts.rowCount ?? 0;
  }
  return written;
}

/** A push taken by one worker: it alone sends it until `leaseUntil`. */
export interface ClaimedPush {
  id: number;
  userUid: string;
  applicationId: string;
  /** The application's name, for logs. */
  applicationName: string;
  kind: PushKind;
  seq: number;
  attempts: number;
  pendingSince: Date;
  leaseToken: string;
  pushBase: string;
  /** For `logout`: where the logout token goes, and the audience it is for. */
  backchannelLogoutUri: string | null;
  clientId: string;
  /** The application's JWS algorithm for tokens it receives. */
  idTokenAlg: string;
}

type ClaimedRow = {
  id: string | number;
  user_uid: string;
  application_id: string;
  kind: PushKind;
  seq: string | number;
  attempts: number;
  pending_since: Date | string;
  lease_token: string;
  application_name: string;
  push_base_url: string | null;
  redirect_uris: string[];
  backchannel_logout_uri: string | null;
  client_id: string;
  id_token_signed_response_alg: string;
};

/**
 * Takes up to `limit` due pushes for this worker: pending, due, not leased by
 * a live worker, and the oldest pending push of their (user, application), so
 * order is kept. `FOR UPDATE SKIP LOCKED` keeps two workers from taking the
 * same row at once; the lease keeps it from being taken again while it is
 * being sent. Counts the attempt.
 */
export async function claimDuePushes(
  db: SignonDatabase,
  claim: { limit: number; now: Date; leaseSeconds: number; leaseToken: string },
): Promise<ClaimedPush[]> {
  // First among the earliest due rows only (cheap with a long queue); if that
  // window is full of rows waiting behind others, among every due row.
  const window = claim.limit * 4;
  let rows = await claimAmong(db, claim, window);
  if (rows.length === 0 && (await countDue(db, claim.now)) > window) rows = await claimAmong(db, claim, null);
  return rows
    .map((row) => ({
      id: Number(row.id),
      userUid: row.user_uid,
      applicationId: row.application_id,
      applicationName: row.application_name,
      kind: row.kind,
      seq: Number(row.seq),
      attempts: row.attempts,
      pendingSince: new Date(row.pending_since),
      leaseToken: row.lease_token,
      pushBase: pushBaseOf(row.push_base_url, row.redirect_uris),
      backchannelLogoutUri: row.backchannel_logout_uri,
      clientId: row.client_id,
      idTokenAlg: row.id_token_signed_response_alg,
    }))
    .sort((a, b) => a.seq - b.seq);
}

async function claimAmong(
  db: SignonDatabase,
  claim: { limit: number; now: Date; leaseSeconds: number; leaseToken: string },
  window: number | null,
): Promise<ClaimedRow[]> {
  const now = claim.now.toISOString();
  const result = await db.execute<ClaimedRow>(sql`
    with candidates as (
      select d.id, d.user_uid, d.application_id, d.seq, d.next_attempt_at from signon.push_deliveries d
       where d.status = 'pending' and d.next_attempt_at <= ${now}::timestamptz
         and (d.lease_until is null or d.lease_until <= ${now}::timestamptz)
       order by d.next_attempt_at, d.seq
       limit ${window}
    ), due as (
      select d.id from signon.push_deliveries d join candidates c on c.id = d.id
       where not exists (select 1 from signon.push_deliveries e
                          where e.user_uid = c.user_uid and e.application_id = c.application_id
                            and e.status = 'pending' and e.seq < c.seq)
       order by c.next_attempt_at, c.seq
       limit ${claim.limit}
       for update of d skip locked
    )
    update signon.push_deliveries d
       set lease_token = ${claim.leaseToken}::uuid,
           lease_until = ${now}::timestamptz + make_interval(secs => ${claim.leaseSeconds}),
           attempts = d.attempts + 1, last_attempt_at = ${now}::timestamptz
      from due, signon.applications a
     where d.id = due.id and a.id = d.application_id
       and d.status = 'pending' and (d.lease_until is null or d.lease_until <= ${now}::timestamptz)
    returning d.id, d.user_uid, d.application_id, d.kind, d.seq, d.attempts, d.pending_since, d.lease_token,
              a.name as application_name, a.push_base_url, a.redirect_uris, a.backchannel_logout_uri, a.client_id, a.id_token_signed_response_alg`);
  return result.rows;
}

async function countDue(db: SignonDatabase, now: Date): Promise<number> {
  const result = await db.execute<{ due: number }>(sql`
    select count(*)::int as due from signon.push_deliveries
     where status = 'pending' and next_attempt_at <= ${now.toISOString()}::timestamptz
       and (lease_until is null or lease_until <= ${now.toISOString()}::timestamptz)`);
  return result.rows[0]?.due ?? 0;
}

/** `push_base` of an application: as registered, else the origin of its first redirect URI (S13). */
export function pushBaseOf(pushBaseUrl: string | null, redirectUris: readonly string[]): string {
  if (pushBaseUrl) return pushBaseUrl.replace(/\/+$/, "");
  const first = redirectUris[0];
  return first === undefined ? "" : new URL(first).origin;
}

/** How one attempt ended, for `finishPushes`. */
export interface PushOutcome {
  id: number;
  leaseToken: string;
  /** The sequence number that was sent: if the row has a newer one now, it stays pending. */
  seq: number;
  status: PushStatus;
  nextAttemptAt: Date;
  error: string | null;
}

/**
 * Records the outcomes of attempts and releases their leases, in one
 * statement. A row whose lease was lost is left alone. A row queued again
 * while it was being sent stays pending with the newer state's schedule. A
 * delivered `PUT` carried the user's state of its sending time, so it also
 * counts as the application's last sync of that user.
 */
export async function finishPushes(db: SignonDatabase, outcomes: readonly PushOutcome[], now: Date): Promise<void> {
  if (outcomes.length === 0) return;
  const records = JSON.stringify(
    outcomes.map((outcome) => ({
      id: outcome.id,
      lease: outcome.leaseToken,
      seq: outcome.seq,
      status: outcome.status,
      next: outcome.nextAttemptAt.toISOString(),
      error: outcome.error,
    })),
  );
  const at = now.toISOString();
  await db.execute(sql`
    with finished as (
    update signon.push_deliveries d
       set status = case when d.seq = r.seq then r.status else d.status end,
           next_attempt_at = case when d.seq = r.seq then r.next else d.next_attempt_at end,
           last_error = case when d.seq = r.seq then r.error else d.last_error end,
           delivered_at = case when d.seq = r.seq and r.status = 'delivered' then ${at}::timestamptz else d.delivered_at end,
           lease_token = null, lease_until = null, updated_at = ${at}::timestamptz
      from jsonb_to_recordset(${records}::jsonb) as r(id bigint, lease uuid, seq bigint, status text, next timestamptz, error text)
     where d.id = r.id and d.lease_token = r.lease
    returning d.user_uid, d.application_id, d.kind, r.status as outcome)
    insert into signon.user_application_syncs as s (user_uid, application_id, last_synced_at, last_synced_by)
    select distinct f.user_uid, f.application_id, ${at}::timestamptz, 'push'
      from finished f
     where f.kind = 'update' and f.outcome = 'delivered'
    on conflict (user_uid, application_id) do update
       set last_synced_at = excluded.last_synced_at, last_synced_by = excluded.last_synced_by
     where s.last_synced_at < excluded.last_synced_at`);
}

/** The `/user.json` body of a user for an application, built from the current state (S11, S12). */
export interface UserJsonBody {
  user: {
    uid: string;
    name: string;
    email: string;
    permissions: string[];
    organisation_slug: string | null;
    organisation_content_id: string | null;
    disabled: boolean;
  };
}

/**
 * The current `/user.json` bodies of (user, application) pairs, keyed `uid application_id`. A suspended
 * person's body says `disabled: true` with no permissions: an application that keeps what a push says
 * holds nothing for them, as Signon's pushes do.
 */
export async function readUserJsonBodies(
  db: SignonDatabase,
  pairs: readonly { userUid: string; applicationId: string }[],
): Promise<Map<string, UserJsonBody>> {
  const bodies = new Map<string, UserJsonBody>();
  if (pairs.length === 0) return bodies;
  const result = await db.execute<{
    uid: string; application_id: string; name: string; email: string; suspended: boolean;
    organisation_slug: string | null; organisation_content_id: string | null; permissions: string[];
  }>(sql`
    select u.uid, x.application_id, u.name, u.email, u.suspended_at is not null as suspended,
           o.slug as organisation_slug, o.content_id as organisation_content_id,
           array(select p.permission from signon.user_permissions p
                  where p.user_uid = u.uid and p.application_id = x.application_id order by p.permission) as permissions
      from jsonb_to_recordset(${JSON.stringify(pairs.map((pair) => ({ uid: pair.userUid, application_id: pair.applicationId })))}::jsonb)
           as x(uid uuid, application_id uuid)
      join signon.users u on u.uid = x.uid
      left join signon.organisations o on o.id = u.organisation_id`);
  for (const row of result.rows) {
    bodies.set(`${row.uid} ${row.application_id}`, {
      user: {
        uid: row.uid,
        name: row.name,
        email: row.email,
        permissions: row.suspended ? [] : row.permissions,
        organisation_slug: row.organisation_slug,
        organisation_content_id: row.organisation_content_id,
        disabled: row.suspended,
      },
    });
  }
  return bodies;
}

/** A push as administrators see it (S14). */
export interface PushRecord {
  id: number;
  user_uid: string;
  email: string;
  application: string;
  kind: PushKind;
  status: PushStatus;
  attempts: number;
  queued_at: string;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
  last_error: string | null;
}

/** Pushes, newest first, optionally of one status. */
export async function listPushes(db: SignonDatabase, filter: { status?: PushStatus | undefined; limit?: number }): Promise<PushRecord[]> {
  const result = await db.execute<{
    id: string; user_uid: string; email: string; application: string; kind: PushKind; status: PushStatus; attempts: number;
    pending_since: Date | string; next_attempt_at: Date | string; last_attempt_at: Date | string | null;
    delivered_at: Date | string | null; last_error: string | null;
  }>(sql`
    select d.id, d.user_uid, u.email, a.name as application, d.kind, d.status, d.attempts, d.pending_since,
           d.next_attempt_at, d.last_attempt_at, d.delivered_at, d.last_error
      from signon.push_deliveries d
      join signon.users u on u.uid = d.user_uid
      join signon.applications a on a.id = d.application_id
     where ${filter.status ?? null}::text is null or d.status = ${filter.status ?? null}::text
     order by d.updated_at desc, d.id desc
     limit ${filter.limit ?? 1000}`);
  const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());
  return result.rows.map((row) => ({
    id: Number(row.id),
    user_uid: row.user_uid,
    email: row.email,
    application: row.application,
    kind: row.kind,
    status: row.status,
    attempts: row.attempts,
    queued_at: new Date(row.pending_since).toISOString(),
    next_attempt_at: row.status === "pending" ? iso(row.next_attempt_at) : null,
    last_attempt_at: iso(row.last_attempt_at),
    delivered_at: iso(row.delivered_at),
    last_error: row.last_error,
  }));
}

/**
 * Makes a push due again now with a fresh retry window (an administrator's
 * retry). Returns `false` when there is no such push.
 */
export async function retryPush(db: SignonDatabase, id: number, now: Date): Promise<boolean> {
  const at = now.toISOString();
  const result = await db.execute(sql`
    update signon.push_deliveries
       set status = 'pending', seq = nextval('signon.push_sequence'), attempts = 0, pending_since = ${at}::timestamptz, next_attempt_at = ${at}::timestamptz,
           delivered_at = null, updated_at = ${at}::timestamptz
     where id = ${id}`);
  return (result.rowCount ?? 0) > 0;
}
