import type { SignonContext } from "../context.js";
import { deleteExpiredRecords } from "../repositories/expired-records.js";
import { pruneOldEvents } from "./event-retention.js";
import { startHourlyJob, type HourlyJob, type JobLog, type JobTiming } from "./hourly-job.js";

/**
 * Deletes expired sessions, remembered browsers, brute-force counters, sign-in
 * access tokens, unused codes and old account links ({@link deleteExpiredRecords})
 * shortly after start and then every hour, and logs how many when there were
 * any; then the audit events past their retention ({@link pruneOldEvents}).
 * Every instance may run it: the deletes are idempotent.
 */
export function startExpiredRecordsJob(
  ctx: SignonContext,
  options: JobTiming & { log: JobLog },
): HourlyJob {
  return startHourlyJob(
    "Expired-records",
    async () => {
      const counts = await deleteExpiredRecords(ctx.db, ctx.now(), ctx.config.sessionIdleSeconds);
      const events = await pruneOldEvents(ctx);
      if (events > 0) options.log.info(`Deleted ${events} audit event(s) older than ${ctx.config.eventRetentionDays} days`);
      const removed = Object.entries(counts).filter(([, count]) => count > 0);
      if (removed.length > 0) options.log.info(`Deleted expired records: ${removed.map(([kind, count]) => `${count} ${kind}`).join(", ")}`);
    },
    options,
  );
}
