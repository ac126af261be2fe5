import { and, asc, eq, isNotNull, isNull, lte, sql, type SQL } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { identityProviders, upstreamIdentities, users } from "../db/schema.js";

/** How long, in days, the inactivity job waits after a suspension is lifted before it may suspend again. */
export const unsuspensionGraceDays = 7;

/**
 * When the inactivity job suspends a person who does not sign in: `days`
 * after their last sign-in (or the account's creation if they never did),
 * but never within the grace period after a suspension was lifted.
 */
function suspensionDueAt(days: number): SQL<Date> {
  return sql<Date>`greatest(
    coalesce(${users.lastSignedInAt}, ${users.createdAt}) + make_interval(days => ${days}::int),
    ${users.unsuspendedAt} + make_interval(days => ${unsuspensionGraceDays}::int))`;
}

/**
 * People (not API users) who are not suspended and whose inactivity
 * suspension is due at `now` (see `suspensionDueAt`).
 */
export async function findInactivePeople(db: SignonDatabase, now: Date, days: number): Promise<{ uid: string; email: string }[]> {
  return db
    .select({ uid: users.uid, email: users.email })
    .from(users)
    .where(and(eq(users.isApiUser, false), isNull(users.suspendedAt), lte(suspensionDueAt(days), now)))
    .orderBy(asc(users.createdAt));
}

/** People to remind of a coming inactivity suspension: who can sign in and whose suspension is due within `withinDays`. */
export async function findPeopleNearInactivity(db: SignonDatabase, now: Date, days: number, withinDays: number): Promise<{ uid: string; dueAt: Date }[]> {
  const due = suspensionDueAt(days);
  const rows = await db
    .select({ uid: users.uid, dueAt: sql<number>`(extract(epoch from ${due}) * 1000)::float8` })
    .from(users)
    .where(
      and(
        eq(users.isApiUser, false),
        isNull(users.suspendedAt),
        isNotNull(users.passwordHash),
        sql`${due} > ${now.toISOString()}::timestamptz`,
        sql`${due} <= ${now.toISOString()}::timestamptz + make_interval(days => ${withinDays}::int)`,
      ),
    )
    .orderBy(asc(users.createdAt));
  return rows.map((row) => ({ uid: row.uid, dueAt: new Date(row.dueAt) }));
}

/**
 * Records that the reminder `reminderDays` before the person's inactivity
 * suspension is being sent, unless it (or a later one) already was for the
 * same suspension date, or the person signed in meanwhile (the date moved
 * beyond `reminderDays`). Returns the person's address, name and suspension
 * date when this call claimed the reminder, `null` otherwise; atomic, so two
 * instances never both claim one.
 */
export async function claimInactivityReminder(
  db: SignonDatabase,
  uid: string,
  now: Date,
  days: number,
  reminderDays: number,
): Promise<{ email: string; name: string; dueAt: Date } | null> {
  const due = suspensionDueAt(days);
  const at = now.toISOString();
  const [row] = await db
    .update(users)
    .set({ inactivityReminderFor: due, inactivityReminderDays: reminderDays })
    .where(
      and(
        eq(users.uid, uid),
        isNull(users.suspendedAt),
        sql`${due} > ${at}::timestamptz`,
        sql`${due} <= ${at}::timestamptz + make_interval(days => ${reminderDays}::int)`,
        sql`not (${users.inactivityReminderFor} is not distinct from ${due} and ${users.inactivityReminderDays} <= ${reminderDays})`,
      ),
    )
    .returning({ email: users.email, name: users.name, dueAt: users.inactivityReminderFor });
  return row?.dueAt ? { email: row.email, name: row.name, dueAt: row.dueAt } : null;
}

/**
 * Deletes people invited at least `days` before `now` (counting from the
 * latest invitation, or the account's creation) who never chose a password
 * nor signed in, one at a time so each deletion has its audit event in its
 * own transaction (`onDeleted`). Returns who was deleted.
 */
export async function deleteNeverUsedInvitation(
  db: SignonDatabase,
  uid: string,
  now: Date,
  days: number,
): Promise<{ uid: string; email: string; name: string; invitedAt: Date } | null> {
  const [row] = await db
    .delete(users)
    .where(and(eq(users.uid, uid), neverUsedInvitation(now, days)))
    .returning({ uid: users.uid, email: users.email, name: users.name, invitedAt: sql<number>`(extract(epoch from coalesce(${users.invitationSentAt}, ${users.createdAt})) * 1000)::float8` });
  return row ? { uid: row.uid, email: row.email, name: row.name, invitedAt: new Date(row.invitedAt) } : null;
}

/** The uids of people whose invitation was never used and is `days` old at `now` (see `deleteNeverUsedInvitation`). */
export async function findNeverUsedInvitations(db: SignonDatabase, now: Date, days: number): Promise<string[]> {
  const rows = await db.select({ uid: users.uid }).from(users).where(neverUsedInvitation(now, days)).orderBy(asc(users.createdAt));
  return rows.map((row) => row.uid);
}

function neverUsedInvitation(now: Date, days: number): SQL {
  return and(
    eq(users.isApiUser, false),
    isNull(users.passwordHash),
    isNull(users.lastSignedInAt),
    sql`coalesce(${users.invitationSentAt}, ${users.createdAt}) + make_interval(days => ${days}::int) <= ${now.toISOString()}::timestamptz`,
  ) as SQL;
}

/**
 * People of organisations whose provider suspends those it has not vouched for in `suspend_unseen_days`, at one of
 * the domains it answers for (someone else's address signs in with a password): not suspended, not API users, not
 * the provider's break-glass addresses, last seen through the provider (or, never seen,
 * since the provider was connected or the account made, whichever is later) that many days ago, and not within the
 * grace period after a suspension was lifted.
 */
export async function findPeopleUnseenUpstream(db: SignonDatabase, now: Date): Promise<{ uid: string; email: string; days: number }[]> {
  const result = await db.execute<{ uid: string; email: string; days: number }>(sql`
    select u.uid, u.email, p.suspend_unseen_days as days
      from ${users} u
      join ${identityProviders} p on p.organisation_id = u.organisation_id
      left join ${upstreamIdentities} i on i.provider_id = p.id and i.user_uid = u.uid
     where not u.is_api_user and u.suspended_at is null and p.suspend_unseen_days is not null
       and split_part(lower(u.email), '@', 2) = any(p.domains)
       and not (lower(u.email) = any(p.password_addresses))
       and greatest(
             coalesce(i.last_seen_at, greatest(p.created_at, u.created_at)) + make_interval(days => p.suspend_unseen_days),
             u.unsuspended_at + make_interval(days => ${unsuspensionGraceDays}::int)) <= ${now}
     order by u.created_at`);
  return result.rows;
}
