import { eq, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { settings } from "../db/schema.js";

/** Key of the `settings` row that records that the first-start set-up ran. */
export const FIRST_START_KEY = "first_start";

/** What the marker row records. */
export interface FirstStartMarker {
  completedAt: string;
  adminEmail: string;
  /** The client id of the `completion` application it registered (set-ups before it did not keep it). */
  completionClientId?: string;
}

/**
 * Claims the first-start marker inside the caller's transaction: true when
 * this transaction inserted it (the set-up is to run now), false when it was
 * already there. A concurrent claim waits for this transaction and then
 * finds the row, so only one set-up ever runs.
 */
export async function claimFirstStart(tx: SignonDatabase, marker: FirstStartMarker, now: Date): Promise<boolean> {
  const inserted = await tx
    .insert(settings)
    .values({ key: FIRST_START_KEY, value: marker, updatedAt: now })
    .onConflictDoNothing({ target: settings.key })
    .returning({ key: settings.key });
  return inserted.length === 1;
}

/** Adds the `completion` application's client id to the marker claimed in the same transaction. */
export async function recordCompletionClientId(tx: SignonDatabase, completionClientId: string, now: Date): Promise<void> {
  await tx
    .update(settings)
    .set({ value: sql`${settings.value} || jsonb_build_object('completionClientId', ${completionClientId}::text)`, updatedAt: now })
    .where(eq(settings.key, FIRST_START_KEY));
}

/** The marker of a first start that already ran, or null. */
export async function readFirstStart(db: SignonDatabase): Promise<FirstStartMarker | null> {
  const rows = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, FIRST_START_KEY));
  const value = rows[0]?.value;
  if (value === undefined || value === null || typeof value !== "object") return null;
  const { completedAt, adminEmail, completionClientId } = value as Record<string, unknown>;
  return {
    completedAt: String(completedAt ?? ""),
    adminEmail: String(adminEmail ?? ""),
    ...(typeof completionClientId === "string" ? { completionClientId } : {}),
  };
}

