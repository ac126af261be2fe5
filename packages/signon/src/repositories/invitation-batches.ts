import { and, asc, count, eq, isNull, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { invitationBatches, invitationBatchRows } from "../db/schema.js";

export type InvitationBatch = typeof invitationBatches.$inferSelect;
export type InvitationBatchRow = typeof invitationBatchRows.$inferSelect;
export type BatchRowOutcome = "pending" | "invited" | "exists" | "invalid";

/** Stores a batch and its rows (all pending). */
export async function insertInvitationBatch(
  db: SignonDatabase,
  batch: typeof invitationBatches.$inferInsert,
  rows: readonly { line: number; name: string; email: string; organisation: string | null }[],
): Promise<void> {
  await db.insert(invitationBatches).values(batch);
  // A few hundred rows per statement keeps well under PostgreSQL's parameter limit.
  for (let start = 0; start < rows.length; start += 500) {
    await db.insert(invitationBatchRows).values(rows.slice(start, start + 500).map((row) => ({ ...row, batchId: batch.id })));
  }
}

export async function findInvitationBatch(db: SignonDatabase, id: string): Promise<InvitationBatch | null> {
  const [batch] = await db.select().from(invitationBatches).where(eq(invitationBatches.id, id));
  return batch ?? null;
}

/** The rows of a batch, in file order. */
export async function listInvitationBatchRows(db: SignonDatabase, batchId: string): Promise<InvitationBatchRow[]> {
  return db.select().from(invitationBatchRows).where(eq(invitationBatchRows.batchId, batchId)).orderBy(asc(invitationBatchRows.line));
}

/**
 * Claims the next pending row of any unfinished batch, oldest batch first,
 * locking it for the caller's transaction; rows locked by another worker are
 * skipped. `null` when nothing is pending.
 */
export async function claimPendingBatchRow(db: SignonDatabase, batchId?: string): Promise<InvitationBatchRow | null> {
  const result = await db.execute<{ batch_id: string; line: number }>(sql`
    select r.batch_id, r.line from signon.invitation_batch_rows r join signon.invitation_batches b on b.id = r.batch_id
     where r.outcome = 'pending' ${batchId === undefined ? sql`` : sql`and r.batch_id = ${batchId}::uuid`}
     order by b.created_at, r.batch_id, r.line
     limit 1
     for update of r skip locked`);
  const claimed = result.rows[0];
  if (!claimed) return null;
  const [row] = await db
    .select()
    .from(invitationBatchRows)
    .where(and(eq(invitationBatchRows.batchId, claimed.batch_id), eq(invitationBatchRows.line, Number(claimed.line))));
  return row ?? null;
}

/** Records what became of a row. */
export async function settleBatchRow(
  db: SignonDatabase,
  row: { batchId: string; line: number },
  outcome: Exclude<BatchRowOutcome, "pending">,
  details: { reason?: string | null; userUid?: string | null; at: Date },
): Promise<void> {
  await db
    .update(invitationBatchRows)
    .set({ outcome, reason: details.reason ?? null, userUid: details.userUid ?? null, processedAt: details.at })
    .where(and(eq(invitationBatchRows.batchId, row.batchId), eq(invitationBatchRows.line, row.line)));
}

/** Marks the batch finished when none of its rows is pending any more. */
export async function finishBatchIfDone(db: SignonDatabase, batchId: string, now: Date): Promise<void> {
  const [pending] = await db
    .select({ count: count() })
    .from(invitationBatchRows)
    .where(and(eq(invitationBatchRows.batchId, batchId), eq(invitationBatchRows.outcome, "pending")));
  if ((pending?.count ?? 0) > 0) return;
  await db
    .update(invitationBatches)
    .set({ finishedAt: now })
    .where(and(eq(invitationBatches.id, batchId), isNull(invitationBatches.finishedAt)));
}

/** The number of rows of a batch per outcome. */
export async function countBatchOutcomes(db: SignonDatabase, batchId: string): Promise<Record<BatchRowOutcome, number>> {
  const rows = await db
    .select({ outcome: invitationBatchRows.outcome, count: sql<number>`count(*)::int` })
    .from(invitationBatchRows)
    .where(eq(invitationBatchRows.batchId, batchId))
    .groupBy(invitationBatchRows.outcome);
  const counts: Record<BatchRowOutcome, number> = { pending: 0, invited: 0, exists: 0, invalid: 0 };
  for (const row of rows) counts[row.outcome as BatchRowOutcome] = Number(row.count);
  return counts;
}
