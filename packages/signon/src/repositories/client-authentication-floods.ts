import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";

/** What the application page shows of failed authentications of its client id (S15). */
export interface ClientAuthenticationPressure {
  /** Failures for the client id, from any addresses, in the current window (0 when none is open). */
  failuresInWindow: number;
  /** When the latest flood (over 100 failures in a window) was recorded, or `null`. */
  lastFloodAt: Date | null;
}

/**
 * The failures counted for a client id in its open window and the time of
 * its latest flood event. `floodCounterKey` is the counter's full key.
 */
export async function readClientAuthenticationPressure(
  db: SignonDatabase,
  application: { id: string },
  floodCounterKey: string,
  now: Date,
): Promise<ClientAuthenticationPressure> {
  const result = await db.execute<{ failures: number | null; last_flood_at: Date | string | null }>(sql`
    select (select c.failures from signon.failure_counters c
             where c.key = ${floodCounterKey} and c.window_ends_at > ${now.toISOString()}::timestamptz) as failures,
           (select max(e.occurred_at) from signon.audit_events e
             where e.application_id = ${application.id} and e.action = 'client_authentication_flood') as last_flood_at`);
  const row = result.rows[0];
  return {
    failuresInWindow: row?.failures ?? 0,
    lastFloodAt: row?.last_flood_at == null ? null : new Date(row.last_flood_at),
  };
}

/** How many client ids are over `threshold` failures in an open window whose key starts with `keyPrefix`: the flood gauge. */
export async function countFloodedClients(db: SignonDatabase, keyPrefix: string, threshold: number, now: Date): Promise<number> {
  const result = await db.execute<{ flooded: number }>(sql`
    select count(*)::int as flooded from signon.failure_counters
     where starts_with(key, ${keyPrefix}) and failures > ${threshold} and window_ends_at > ${now.toISOString()}::timestamptz`);
  return result.rows[0]?.flooded ?? 0;
}
