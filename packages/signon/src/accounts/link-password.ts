import { grantDefaultPermissions } from "../applications/default-permissions.js";
import type { SignonContext } from "../context.js";
import { pushesCommitted } from "../pushes/queue.js";
import type { SignonDatabase } from "../db/database.js";
import { storePasswordHash } from "../repositories/password-history.js";
import type { RequestOrigin } from "../context.js";
import type { User } from "../repositories/users.js";
import { consumeAccountLink, inspectAccountLink, type PasswordLinkPurpose } from "./account-links.js";
import { hashPassword } from "./password.js";
import { checkNewPasswordForm, type FieldErrors } from "./password-policy.js";
import { clearAccountLock, signInSource } from "./sign-in-limits.js";

/** What setting a password through an e-mailed link gave: the link's user, form errors, or why the link cannot be used. */
export type LinkPasswordResult =
  | { ok: true; user: User }
  | { ok: false; errors: FieldErrors }
  | { ok: false; link: "unknown" | "expired" | "used" };

/**
 * Sets the password chosen through an e-mailed link (invitation or password
 * reset): checks it against the policy, then in one transaction uses up the
 * link, stores the password (and its history), lifts any lock (S15: with the
 * failed sign-ins counted against the address from the browser's own source
 * address), grants the default permissions when this is the person's first
 * password (someone invited, or created without a password, becomes a user
 * now, whichever link they follow) and runs `alsoInTransaction` (what the
 * purpose adds, and its audit event).
 * A link used meanwhile by another request answers `used`.
 */
export async function setPasswordThroughLink(
  ctx: SignonContext,
  token: string,
  purpose: PasswordLinkPurpose,
  form: { password: string; confirmation: string },
  origin: RequestOrigin,
  alsoInTransaction: (tx: SignonDatabase, user: User, now: Date) => Promise<void>,
): Promise<LinkPasswordResult> {
  const found = await inspectAccountLink(ctx, token, purpose);
  if (found.state !== "usable") return { ok: false, link: found.state };
  const errors = await checkNewPasswordForm(ctx, found.user, form.password, form.confirmation);
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const passwordHash = await hashPassword(form.password, ctx.config.passwordHashing);
  const now = ctx.now();
  const done = await ctx.db.transaction(async (tx) => {
    if (!(await consumeAccountLink(tx, token, purpose, now))) return false;
    await storePasswordHash(tx, found.user.uid, passwordHash, now);
    await clearAccountLock(tx, found.user, now, { source: signInSource(origin) });
    await alsoInTransaction(tx, found.user, now);
    // After the purpose's own grants, so that a permission the invitation also grants is granted and audited once.
    if (found.user.passwordHash === null) await grantDefaultPermissions(tx, { userUid: found.user.uid, now, actorUid: found.user.uid, origin });
    return true;
  });
  if (!done) return { ok: false, link: "used" };
  pushesCommitted(ctx);
  return { ok: true, user: found.user };
}
