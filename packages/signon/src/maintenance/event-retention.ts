import type { SignonContext } from "../context.js";
import { deleteAuditEventsBefore } from "../repositories/audit-events.js";

/** Events deleted per statement by {@link pruneOldEvents}. */
export const eventPruneBatchSize = 5000;

/**
 * Deletes the audit events older than `config.eventRetentionDays` (the
 * event log of users and accounts, and every other audit record), in
 * batches of `batchSize`, each its own short statement, so that a huge
 * table never holds a long lock and a run that stops half way loses
 * nothing. Returns how many were deleted.
 */
export async function pruneOldEvents(ctx: SignonContext, batchSize = eventPruneBatchSize): Promise<number> {
  const cutoff = new Date(ctx.now().getTime() - ctx.config.eventRetentionDays * 86_400_000);
  let total = 0;
  for (;;) {
    const deleted = await deleteAuditEventsBefore(ctx.db, cutoff, batchSize);
    total += deleted;
    if (deleted < batchSize) return total;
  }
}
