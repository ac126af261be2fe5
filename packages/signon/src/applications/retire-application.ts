import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { findApplicationById, updateApplicationRow } from "../repositories/application-admin.js";
import type { Application } from "../repositories/applications.js";

/**
 * Retires an application (a flag: `unretireApplication` brings it back). The core then refuses it everywhere: the
 * authorize page does not know it, its client secret no longer authenticates,
 * its access tokens no longer resolve at `/user.json`, no token can be issued
 * for it and no push is queued to it. Returns `null` when there is no such
 * application, and the application unchanged when it was already retired.
 */
export async function retireApplication(
  ctx: SignonContext,
  id: string,
  actor: { uid: string; origin: RequestOrigin },
): Promise<Application | null> {
  const current = await findApplicationById(ctx.db, id);
  if (!current || current.retired) return current;
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const updated = await updateApplicationRow(tx, id, { retired: true });
    if (updated) await audit(tx, { action: "application_retired", at: now, actorUid: actor.uid, applicationId: id, origin: actor.origin, details: { name: current.name } });
    return updated;
  });
}

/**
 * Brings a retired application back: it works again as before it was
 * retired. The authorize page knows it, its client secret authenticates, and
 * its tokens that have neither expired nor been revoked resolve again; pushes
 * are queued to it again for changes from now on (changes made while it was
 * retired are not replayed). Returns `null` when there is no such
 * application, and the application unchanged when it was not retired.
 */
export async function unretireApplication(
  ctx: SignonContext,
  id: string,
  actor: { uid: string; origin: RequestOrigin },
): Promise<Application | null> {
  const current = await findApplicationById(ctx.db, id);
  if (!current || !current.retired) return current;
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const updated = await updateApplicationRow(tx, id, { retired: false });
    if (updated) await audit(tx, { action: "application_unretired", at: now, actorUid: actor.uid, applicationId: id, origin: actor.origin, details: { name: current.name } });
    return updated;
  });
}
