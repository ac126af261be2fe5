import { audit } from "../audit.js";
import type { SignonContext } from "../context.js";
import { startHourlyJob, type HourlyJob, type JobLog, type JobTiming } from "../maintenance/hourly-job.js";
import { findInactivePeople } from "../repositories/inactive-users.js";
import { AccountError, suspendUser } from "./manage-users.js";

/**
 * Suspends every person who has not signed in for `config.inactivityDays`
 * (counting from the account's creation if they never did), with the reason
 * "Not signed in for N days". It takes the same path as any suspension:
 * sessions end, tokens are revoked, pushes are queued (S13, S18). API users
 * and people already suspended are left alone. Returns the e-mail addresses
 * suspended.
 */
export async function suspendInactiveUsers(ctx: SignonContext): Promise<string[]> {
  const days = ctx.config.inactivityDays;
  const now = ctx.now();
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  const reason = `Not signed in for ${days} days`;
  const suspended: string[] = [];
  for (const person of await findInactivePeople(ctx.db, cutoff)) {
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
 * Runs `suspendInactiveUsers` shortly after start and then every hour (see
 * {@link startHourlyJob}). Failures are logged, and the next run tries again.
 */
export function startInactivityJob(
  ctx: SignonContext,
  options: JobTiming & { log: JobLog },
): HourlyJob {
  return startHourlyJob(
    "Inactivity",
    async () => {
      const emails = await suspendInactiveUsers(ctx);
      if (emails.length > 0) options.log.info(`Suspended ${emails.length} account(s) not signed in for ${ctx.config.inactivityDays} days`);
    },
    options,
  );
}
