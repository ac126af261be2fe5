import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { storePasswordHash } from "../repositories/password-history.js";
import type { User } from "../repositories/users.js";
import { pushesCommitted } from "../pushes/queue.js";
import { endSignInsEverywhere } from "./end-sign-ins-everywhere.js";
import { hashPassword, verifyPassword } from "./password.js";
import { checkNewPasswordForm, type FieldErrors } from "./password-policy.js";
import { countSignInFailureFor } from "./sign-in-limits.js";

/** The "change your password" form. */
export interface PasswordChange {
  current: string;
  password: string;
  confirmation: string;
}

/**
 * Changes a signed-in person's password: the current one must be right (a
 * wrong one counts as a failed sign-in from this address, S15), the new one must pass the
 * policy. Stores it with its history, writes `password_changed` and ends
 * every sign-in of the user but this browser's session (S18): tokens of
 * every application revoked, reauth pushed. Returns messages per field when
 * refused.
 */
export async function changePassword(
  ctx: SignonContext,
  user: User,
  sessionIdHash: string,
  form: PasswordChange,
  origin: RequestOrigin,
  onMailFailure: (error: unknown) => void = () => undefined,
): Promise<{ ok: true } | { ok: false; errors: FieldErrors }> {
  const now = ctx.now();
  if (form.current === "" || !(await verifyPassword(user.passwordHash, form.current, ctx.config.passwordHashing))) {
    if (form.current !== "") await countSignInFailureFor(ctx, { email: user.email, kind: "password", origin, now }, onMailFailure);
    return { ok: false, errors: { current: form.current === "" ? "Enter your current password" : "Your current password is not right" } };
  }
  const errors = await checkNewPasswordForm(ctx, user, form.password, form.confirmation);
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const passwordHash = await hashPassword(form.password, ctx.config.passwordHashing);
  await ctx.db.transaction(async (tx) => {
    await storePasswordHash(tx, user.uid, passwordHash, now);
    await audit(tx, { action: "password_changed", at: now, actorUid: user.uid, subjectUid: user.uid, origin });
    await endSignInsEverywhere(tx, { user, cause: "password_changed", now, fanOut: ctx.config.pushes.fanOut, keepSessionIdHash: sessionIdHash, actorUid: user.uid, origin });
  });
  pushesCommitted(ctx);
  return { ok: true };
}
