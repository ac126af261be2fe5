import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { findPushOfApplication, lockFailedPushOfApplication } from "../repositories/application-pushes.js";
import { retryPush } from "../repositories/push-deliveries.js";
import { pushesCommitted } from "../pushes/queue.js";

/** Why a retry was not done. */
export type RetryRefusal = "not_found" | "not_failed";

/**
 * Makes a failed push to an application due again now, with a fresh retry
 * window, as `signon pushes retry` does (S14), and wakes the delivery worker.
 * Only failed pushes are retried here (pending ones are retried anyway); the
 * row is locked while it is checked and changed, so two clicks retry once.
 */
export async function retryFailedPush(
  ctx: SignonContext,
  applicationId: string,
  pushId: number,
  actor: { uid: string; origin: RequestOrigin },
): Promise<{ ok: true } | { ok: false; reason: RetryRefusal }> {
  const now = ctx.now();
  const retried = await ctx.db.transaction(async (tx) => {
    const push = await lockFailedPushOfApplication(tx, applicationId, pushId);
    if (!push) return false;
    await retryPush(tx, pushId, now);
    await audit(tx, {
      action: "push_retried",
      at: now,
      actorUid: actor.uid,
      subjectUid: push.userUid,
      applicationId,
      origin: actor.origin,
      details: { push_id: pushId, kind: push.kind, attempts: push.attempts },
    });
    return true;
  });
  if (!retried) {
    const exists = await findPushOfApplication(ctx.db, applicationId, pushId);
    return { ok: false, reason: exists ? "not_failed" : "not_found" };
  }
  pushesCommitted(ctx);
  return { ok: true };
}
