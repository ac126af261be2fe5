import type { SignonContext } from "../context.js";
import { listEventsOfUser, type UserEventRow } from "../repositories/user-events.js";

/** Events shown on one page of a user's event log. */
export const eventsPerPage = 50;

/** One page (from 1) of a user's audit events, newest first, and whether another page follows. */
export async function eventsOfUser(ctx: SignonContext, userUid: string, page: number): Promise<{ events: UserEventRow[]; hasNextPage: boolean }> {
  const rows = await listEventsOfUser(ctx.db, userUid, { limit: eventsPerPage + 1, offset: (page - 1) * eventsPerPage });
  return { events: rows.slice(0, eventsPerPage), hasNextPage: rows.length > eventsPerPage };
}
