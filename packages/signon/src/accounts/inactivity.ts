import { audit } from "../audit.js";
import type { SignonContext } from "../context.js";
import { mailErrorForLog, sendMail } from "../mail/send-mail.js";
import { formatTime } from "../time-format.js";
import { startHourlyJob, type HourlyJob, type JobLog, type JobTiming } from "../maintenance/hourly-job.js";
import {
  claimInactivityReminder,
  deleteNeverUsedInvitation,
  findInactivePeople,
  findNeverUsedInvitations,
  findPeopleNearInactivity,
  findPeopleUnseenUpstream,
} from "../repositories/inactive-users.js";
import { AccountError, suspendUser } from "./manage-users.js";

/** Reminder mails go this many days before an inactivity suspension, each once per suspension date. */
export const inactivityReminderDays = [14, 7, 3, 1] as const;

/**
 * Suspends every person who has not signed in for `config.inactivityDays`
 * (counting from the account's creation if they never did), with the reason
 * "Not signed in for N days", but none within a week after an administrator
 * lifted their suspension. It takes the same path as any suspension:
 * sessions end, tokens are revoked, pushes are queued (S13, S18). API users
 * and people already suspended are left alone. Returns the e-mail addresses
 * suspended.
 */
export async function suspendInactiveUsers(ctx: SignonContext): Promise<string[]> {
  const days = ctx.config.inactivityDays;
  const reason = `Not signed in for ${days} days`;
  const suspended: string[] = [];
  for (const person of await findInactivePeople(ctx.db, ctx.now(), days)) {
    try {
      const user = await suspendUser(ctx, person.email, reason, null);
      await audit(ctx.db, { action: "suspended_for_inactivity", at: ctx.now(), subjectUid: user.uid, details: { days } });
      suspended.push(user.email);
    } catch (error) {
      // Suspended or renamed by someone else since the query: nothing to do for this person.
      if (!(error instanceof AccountError)) throw error;
    }
  }
  return suspended;
}

/**
 * Suspends the people an organisation's provider has not vouched for in the days the organisation set
 * (`suspend_unseen_days`): a leaver disabled at the provider is never seen again, and is suspended here with the
 * usual pushes, whether or not they had signed in to Sign-on lately. Returns the addresses suspended.
 */
export async function suspendPeopleUnseenUpstream(ctx: SignonContext): Promise<string[]> {
  const suspended: string[] = [];
  for (const person of await findPeopleUnseenUpstream(ctx.db, ctx.now())) {
    try {
      const user = await suspendUser(ctx, person.email, `Not seen through the organisation's identity provider for ${person.days} days`, null);
      await audit(ctx.db, { action: "suspended_for_inactivity", at: ctx.now(), subjectUid: user.uid, details: { days: person.days, through: "identity_provider" } });
      suspended.push(user.email);
    } catch (error) {
      if (!(error instanceof AccountError)) throw error;
    }
  }
  return suspended;
}

/**
 * Mails the people whose inactivity suspension comes within 14 days: the
 * reminder of the latest of 14, 7, 3 and 1 days before it that has come
 * (those shorter than the inactivity period),
 * unless that one (or a later one) was sent for the same suspension date.
 * What was sent is stored with the person, so a restart neither repeats a
 * reminder nor misses one that came while the job was not running (then
 * only the latest is sent); a sign-in moves the date and starts afresh.
 * Each reminder is recorded and audited (`inactivity_reminder_sent`) in the
 * transaction that sends it, so a mail that cannot be sent is tried again at
 * the next run (the error goes to `onMailFailure`, and the others are still
 * reminded). Returns the addresses reminded, with the days.
 */
export async function sendInactivityReminders(
  ctx: SignonContext,
  onMailFailure: (error: unknown) => void = () => undefined,
): Promise<{ email: string; days: number }[]> {
  const now = ctx.now();
  const sent: { email: string; days: number }[] = [];
  // A reminder as long before as the whole period (or longer) would come right after a sign-in: left out.
  const reminders = inactivityReminderDays.filter((days) => days < ctx.config.inactivityDays).sort((a, b) => a - b);
  if (reminders.length === 0) return [];
  for (const person of await findPeopleNearInactivity(ctx.db, now, ctx.config.inactivityDays, Math.max(...reminders))) {
    const daysLeft = (person.dueAt.getTime() - now.getTime()) / 86_400_000;
    const reminder = reminders.find((days) => daysLeft <= days);
    if (reminder === undefined) continue;
    let claimed;
    try {
      claimed = await ctx.db.transaction(async (tx) => {
        const claim = await claimInactivityReminder(tx, person.uid, now, ctx.config.inactivityDays, reminder);
        if (!claim) return null;
        await audit(tx, { action: "inactivity_reminder_sent", at: now, subjectUid: person.uid, details: { days: reminder, suspension_at: claim.dueAt.toISOString() } });
        await sendMail(ctx, inactivityReminderMail(ctx, claim, Math.ceil(daysLeft))).catch((error: unknown) => Promise.reject(new ReminderNotSent(error)));
        return claim;
      });
    } catch (error) {
      // The claim rolled back with the transaction: the next run tries again.
      if (!(error instanceof ReminderNotSent)) throw error;
      onMailFailure(error.cause);
      continue;
    }
    if (claimed) sent.push({ email: claimed.email, days: reminder });
  }
  return sent;
}

/** A reminder mail that could not be sent; `cause` is the mail error. */
class ReminderNotSent extends Error {
  constructor(cause: unknown) {
    super("inactivity reminder not sent", { cause });
  }
}

/** The reminder mail; `days`: whole days left, rounded up. */
function inactivityReminderMail(ctx: SignonContext, person: { email: string; name: string; dueAt: Date }, days: number) {
  const when = days <= 1 ? "within a day" : `in ${days} days`;
  return {
    to: person.email,
    subject: `Your Tessera Sign-on account will be suspended ${when}`,
    text: [
      `Hello ${person.name},`,
      "",
      `You have not signed in to Tessera Sign-on for a while. Accounts not used for ${ctx.config.inactivityDays} days are suspended,`,
      `and yours will be on ${formatTime(person.dueAt)} unless you sign in before then:`,
      "",
      `${ctx.config.publicUrl}/sign-in`,
      "",
      "Signing in to Tessera Sign-on on the way to any of its applications counts. Once suspended, only an administrator can let you back in.",
    ].join("\n"),
  };
}

/**
 * Deletes the accounts of people invited `config.unusedInvitationDays` ago
 * or more (counting from the latest invitation) who never chose a password
 * nor signed in. Each deletion is audited (`unused_invitation_deleted`,
 * naming the address and name, which the event keeps once the account is
 * gone) in its own transaction. Returns the addresses deleted.
 */
export async function deleteNeverUsedInvitations(ctx: SignonContext): Promise<string[]> {
  const days = ctx.config.unusedInvitationDays;
  const deleted: string[] = [];
  for (const uid of await findNeverUsedInvitations(ctx.db, ctx.now(), days)) {
    const now = ctx.now();
    const gone = await ctx.db.transaction(async (tx) => {
      const row = await deleteNeverUsedInvitation(tx, uid, now, days);
      if (row) {
        await audit(tx, {
          action: "unused_invitation_deleted",
          at: now,
          subjectUid: row.uid,
          details: { email: row.email, name: row.name, invited_at: row.invitedAt.toISOString(), days },
        });
      }
      return row;
    });
    if (gone) deleted.push(gone.email);
  }
  return deleted;
}

/**
 * Runs the account lifecycle shortly after start and then every hour (see
 * {@link startHourlyJob}): inactivity reminders, inactivity suspensions and
 * the deletion of never-used invitations. Failures are logged, and the next
 * run tries again.
 */
export function startInactivityJob(
  ctx: SignonContext,
  options: JobTiming & { log: JobLog },
): HourlyJob {
  return startHourlyJob(
    "Inactivity",
    async () => {
      const reminded = await sendInactivityReminders(ctx, (error) =>
        options.log.error(`Inactivity reminder could not be sent: ${JSON.stringify(mailErrorForLog(error))}`),
      );
      if (reminded.length > 0) options.log.info(`Sent ${reminded.length} inactivity reminder(s)`);
      const emails = await suspendInactiveUsers(ctx);
      if (emails.length > 0) options.log.info(`Suspended ${emails.length} account(s) not signed in for ${ctx.config.inactivityDays} days`);
      const unseen = await suspendPeopleUnseenUpstream(ctx);
      if (unseen.length > 0) options.log.info(`Suspended ${unseen.length} account(s) not seen through their organisation's identity provider`);
      const deleted = await deleteNeverUsedInvitations(ctx);
      if (deleted.length > 0) options.log.info(`Deleted ${deleted.length} invitation(s) not used in ${ctx.config.unusedInvitationDays} days`);
    },
    options,
  );
}
