import { audit } from "../../audit.js";
import type { RequestOrigin, SignonContext } from "../../context.js";
import { deletePasskeyOfUser, listPasskeysOfUser, type Passkey } from "../../repositories/passkeys.js";
import type { User } from "../../repositories/users.js";

export { maxPasskeysPerUser, passkeyNameMaxLength } from "./registration.js";

/** The person's passkeys, oldest first. */
export function passkeysOf(ctx: SignonContext, user: Pick<User, "uid">): Promise<Passkey[]> {
  return listPasskeysOfUser(ctx.db, user.uid);
}

/** Whether a string has the shape of a passkey id (a UUID), so that no query runs for anything else. */
export function isPasskeyId(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

/**
 * Removes one of the person's own passkeys (audited as `passkey_removed`).
 * Returns the passkey removed, or `null` when they have none with that id.
 * Sessions already signed in with it stay; the passkey signs in no more.
 */
export async function removePasskey(ctx: SignonContext, user: Pick<User, "uid">, id: string, origin: RequestOrigin): Promise<Passkey | null> {
  if (!isPasskeyId(id)) return null;
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const removed = await deletePasskeyOfUser(tx, user.uid, id, now);
    if (removed) await audit(tx, { action: "passkey_removed", at: now, actorUid: user.uid, subjectUid: user.uid, origin, details: { name: removed.name, passkey_id: removed.id } });
    return removed;
  });
}
