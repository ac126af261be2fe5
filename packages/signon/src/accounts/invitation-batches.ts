import { randomUUID } from "node:crypto";
import { isDatabaseUnavailable, transactionConflict } from "@tessera/db";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { SignonDatabase } from "../db/database.js";
import { mailErrorForLog } from "../mail/send-mail.js";
import { findOrganisationSummary } from "../repositories/account-overview.js";
import { findApplicationNames } from "../repositories/applications.js";
import { findOrganisationIdBySlugOrName } from "../repositories/organisations.js";
import {
  claimPendingBatchRow,
  finishBatchIfDone,
  findInvitationBatch,
  insertInvitationBatch,
  settleBatchRow,
  type InvitationBatch,
  type InvitationBatchRow,
} from "../repositories/invitation-batches.js";
import { isUniqueViolation } from "../repositories/unique-violation.js";
import { findUserByEmail, findUserByUid, type User } from "../repositories/users.js";
import { mayListUsers } from "../web/policy.js";
import { withAdministrationScope, type ScopedActor } from "./administration-scope.js";
import type { BatchFileRow } from "./invitation-csv.js";
import { checkInvitation, createInvitation, mailInvitation } from "./invitations.js";
import { AccountError, type Role } from "./manage-users.js";

/** What a batch gives every row: role, organisation for rows naming none (`null`: none), permission boxes. */
export interface BatchChoice {
  role: Role;
  organisationId: string | null;
  permissions: readonly string[];
}

/**
 * Starts a batch of invitations: checks that the actor (`null`: the
 * operator's command) may invite with this role, organisation and these
 * permissions, then stores the batch and its rows (pending, or invalid with
 * their problem) and audits it, in one transaction. The rows are invited by
 * {@link processInvitationBatches}, which `ctx.invitationBatchesQueued` wakes.
 * Returns the batch's id.
 */
export async function startInvitationBatch(
  ctx: SignonContext,
  actor: User | null,
  choice: BatchChoice,
  rows: readonly BatchFileRow[],
  origin: RequestOrigin | null,
): Promise<string> {
  await checkInvitation(ctx.db, { email: "", name: "", ...choice }, actor);
  const id = randomUUID();
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
    await insertInvitationBatch(
      tx,
      { id, createdByUid: actor?.uid ?? null, role: choice.role, organisationId: choice.organisationId, permissions: [...new Set(choice.permissions)], createdAt: now },
      rows.map(({ line, name, email, organisation }) => ({ line, name, email, organisation })),
    );
    for (const row of rows) {
      if (row.problem !== undefined) await settleBatchRow(tx, { batchId: id, line: row.line }, "invalid", { reason: row.problem, at: now });
    }
    await finishBatchIfDone(tx, id, now);
    await audit(tx, {
      action: "invitation_batch_started",
      at: now,
      actorUid: actor?.uid ?? null,
      origin,
      details: { batch_id: id, rows: rows.length, role: choice.role, permissions: choice.permissions.length },
    });
  });
  ctx.invitationBatchesQueued?.();
  return id;
}

/** What a batch gives every row, for its page: the organisation of rows that name none, and the permissions by application. */
export interface BatchChoiceSummary {
  /** `null`: none. */
  organisationName: string | null;
  /** By application name, each application's permissions sorted. */
  permissions: { applicationName: string; permissions: string[] }[];
}

/**
 * The organisation and permissions a batch gives every row, in names.
 * Permissions of an application deleted since are left out.
 */
export async function summariseBatchChoice(db: SignonDatabase, batch: InvitationBatch): Promise<BatchChoiceSummary> {
  const chosen = batch.permissions.flatMap((value) => {
    const at = value.indexOf(":");
    return at < 0 ? [] : [{ applicationId: value.slice(0, at).toLowerCase(), permission: value.slice(at + 1) }];
  });
  const [names, organisation] = await Promise.all([
    findApplicationNames(db, [...new Set(chosen.map((box) => box.applicationId))]),
    batch.organisationId === null ? null : findOrganisationSummary(db, batch.organisationId),
  ]);
  const byApplication = new Map<string, Set<string>>();
  for (const { applicationId, permission } of chosen) {
    const name = names.get(applicationId);
    if (name !== undefined) byApplication.set(name, (byApplication.get(name) ?? new Set()).add(permission));
  }
  return {
    organisationName: organisation?.name ?? null,
    permissions: [...byApplication]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([applicationName, permissions]) => ({ applicationName, permissions: [...permissions].sort() })),
  };
}

/** Where the batch job reports mails that could not be sent. */
export interface BatchLog {
  error(details: Record<string, unknown>, message: string): void;
}

/**
 * Invites the pending rows of every batch (or of `batchId` only), one row per
 * transaction: the row is claimed (locked, so two workers never take the same
 * one), the person invited as the single invitation form would (same checks,
 * as the administrator who started the batch) and the row's outcome recorded
 * together, so a restart resumes with the next pending row. The mail is sent
 * after the row commits; one that cannot be sent is noted on the row (the
 * invitation stays, "Resend invitation" sends a new link). Returns the number
 * of rows settled.
 */
export async function processInvitationBatches(ctx: SignonContext, options: { batchId?: string; log?: BatchLog } = {}): Promise<number> {
  let settled = 0;
  for (;;) {
    const step = await ctx.db.transaction(async (tx) => {
      const row = await claimPendingBatchRow(tx, options.batchId);
      if (!row) return null;
      const inTx: SignonContext = { ...ctx, db: tx, pushesQueued: undefined };
      const batch = await findInvitationBatch(tx, row.batchId);
      const result: RowResult = batch ? await inviteRow(inTx, batch, row, options.log) : { outcome: "invalid", reason: "The batch is gone" };
      const now = ctx.now();
      await settleBatchRow(tx, row, result.outcome, { reason: result.reason ?? null, userUid: result.user?.uid ?? null, at: now });
      await finishBatchIfDone(tx, row.batchId, now);
      return { row, result };
    });
    if (step === null) return settled;
    settled++;
    const { row, result } = step;
    if (result.outcome === "invited" && result.user && result.link) {
      const { mailFailure } = await mailInvitation(ctx, result.user, result.actor ?? null, result.link);
      if (mailFailure !== undefined) {
        options.log?.error({ mailError: mailErrorForLog(mailFailure) }, "invitation e-mail could not be sent");
        await settleBatchRow(ctx.db, row, "invited", {
          reason: "The e-mail could not be sent: use Resend invitation on their page",
          userUid: result.user.uid,
          at: ctx.now(),
        });
      }
    }
  }
}

type RowResult = {
  outcome: "invited" | "exists" | "invalid";
  reason?: string;
  user?: User;
  actor?: User | null;
  link?: { token: string; expiresAt: Date };
};

async function inviteRow(ctx: SignonContext, batch: InvitationBatch, row: InvitationBatchRow, log?: BatchLog): Promise<RowResult> {
  let actor: ScopedActor | null = null;
  if (batch.createdByUid !== null) {
    const found = await findUserByUid(ctx.db, batch.createdByUid);
    if (!found || found.suspendedAt !== null || !mayListUsers(found)) {
      return { outcome: "invalid", reason: "The administrator who started this batch can no longer invite people" };
    }
    // What they may grant is read as each row is invited: access they lost since the upload is not used.
    actor = await withAdministrationScope(ctx.db, found);
  }
  const existing = row.email.trim() === "" ? null : await findUserByEmail(ctx.db, row.email.trim());
  if (existing) return { outcome: "exists", reason: "An account already has this e-mail address" };
  let organisationId = batch.organisationId;
  if (row.organisation !== null) {
    const found = await findOrganisationIdBySlugOrName(ctx.db, row.organisation);
    if (!found) return { outcome: "invalid", reason: `No organisation has the slug or name “${row.organisation}”` };
    organisationId = found;
  }
  try {
    // A savepoint: a refused row leaves nothing behind, and the row's outcome is still recorded.
    const { user, link } = await ctx.db.transaction((savepoint) =>
      createInvitation(
        { ...ctx, db: savepoint },
        { email: row.email, name: row.name, role: batch.role as Role, organisationId, permissions: batch.permissions },
        actor,
        null,
        batch.id,
      ),
    );
    return { outcome: "invited", user, link, actor };
  } catch (error) {
    if (isUniqueViolation(error)) return { outcome: "exists", reason: "An account already has this e-mail address" };
    if (error instanceof AccountError) {
      if (/already exists/.test(error.message)) return { outcome: "exists", reason: "An account already has this e-mail address" };
      return { outcome: "invalid", reason: error.message };
    }
    // The savepoint rolled back; a row that fails for another reason must not hold up the rows after it. A deadlock
    // or serialization failure ends the whole transaction, which is run again with this row.
    if (isDatabaseUnavailable(error) || transactionConflict(error) !== null) throw error;
    log?.error({ err: error, batchId: batch.id, line: row.line }, "batch invitation row failed");
    return { outcome: "invalid", reason: "This row could not be invited because of an error on our side; invite this person on their own" };
  }
}
