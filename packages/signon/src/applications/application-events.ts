import { eventsPerPage } from "../accounts/user-events.js";
import type { SignonContext } from "../context.js";
import { listApplicationEvents } from "../repositories/application-events.js";
import type { UserEventRow } from "../repositories/user-events.js";

/**
 * One page of an application's event log (the changes to it), newest first:
 * the latest, or those older than the event `before`; and the cursor of the
 * next (older) page, `null` when there is none.
 */
export async function eventsOfApplication(
  ctx: SignonContext,
  applicationId: string,
  before: number | null,
  perPage = eventsPerPage,
): Promise<{ events: UserEventRow[]; olderThan: number | null }> {
  const rows = await listApplicationEvents(ctx.db, applicationId, { limit: perPage + 1, before });
  const events = rows.slice(0, perPage);
  return { events, olderThan: rows.length > perPage ? (events.at(-1)?.id ?? null) : null };
}
