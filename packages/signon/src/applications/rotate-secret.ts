import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { updateApplicationRow } from "../repositories/application-admin.js";
import type { Application } from "../repositories/applications.js";
import { randomHex, sha256Hex } from "../security/random.js";

/**
 * Gives an application a new client secret (S5): the old one stops working
 * at once, and the new one exists only in the return value (the database
 * keeps its SHA-256 digest). Returns `null` when there is no such application.
 */
export async function rotateClientSecret(
  ctx: SignonContext,
  id: string,
  actor: { uid: string; origin: RequestOrigin },
): Promise<{ application: Application; clientSecret: string } | null> {
  const clientSecret = randomHex();
  const now = ctx.now();
  const application = await ctx.db.transaction(async (tx) => {
    const updated = await updateApplicationRow(tx, id, { clientSecretHash: sha256Hex(clientSecret) });
    if (updated) await audit(tx, { action: "application_secret_rotated", at: now, actorUid: actor.uid, applicationId: id, origin: actor.origin });
    return updated;
  });
  return application ? { application, clientSecret } : null;
}
