import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { findPushOfApplication } from "../repositories/application-pushes.js";
import { retryPush } from "../repositories/push-deliveries.js";
import { pushesCommitted } from "../pushes/queue.js";

/** Why a retry was not done. */
export type RetryRefusal = "not_found" | "not_failed";

/**
 * Makes a failed push to an application due again now, with a fresh retry
 * window, as `signon pushes retry` does (S14), and wakes the delivery worker.
 * Only failed pushes are retried here: pending ones are retried anyway.
 */
export async function retryFailedPush(
  ctx: SignonContext,
  applicationId: string,
  pushId: number,
  actor: { uid: string; origin: RequestOrigin },
): Promise<{ ok: true } | { ok: false; reason: RetryRefusal }> {
  const push = await findPushOfApplication(ctx.db, applicationId, pushId);
  if (!push) return { ok: false, reason: "not_found" };
  if (push.status !== "failed") return { ok: false, reason: "not_failed" };
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
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
  });
  pushesCommitted(ctx);
  return { ok: true };
}
