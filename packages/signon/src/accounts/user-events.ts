import type { SignonContext } from "../context.js";
import { listEventsOfUser, type UserEventRow } from "../repositories/user-events.js";

/** Events shown on one page of a user's event log. */
export const eventsPerPage = 50;

/** The id of an event, as an "older events" link names it: the events after it come next. */
export const eventCursorPattern = "^[1-9][0-9]{0,14}$";

/**
 * One page of a user's audit events, newest first: the latest, or those
 * older than the event `before`; and the cursor of the next (older) page,
 * `null` when there is none.
 */
export async function eventsOfUser(
  ctx: SignonContext,
  userUid: string,
  before: number | null,
  perPage = eventsPerPage,
): Promise<{ events: UserEventRow[]; olderThan: number | null }> {
  const rows = await listEventsOfUser(ctx.db, userUid, { limit: perPage + 1, before });
  const events = rows.slice(0, perPage);
  return { events, olderThan: rows.length > perPage ? (events.at(-1)?.id ?? null) : null };
}
