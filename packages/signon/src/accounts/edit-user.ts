import type { RequestOrigin, SignonContext } from "../context.js";
import type { User } from "../repositories/users.js";
import { checkNewEmail, requestEmailChange } from "./email-change.js";
import { AccountError, updateUserByUid } from "./manage-users.js";
import type { UserFormValues } from "./user-form.js";

/** What an administrator's edit of a user did: saved, with the address a confirmation link went to, or why the address was refused. */
export type EditUserResult = { ok: true; confirmationSentTo: string | null } | { ok: false; emailError: string };

/**
 * An administrator's edit of someone's details (the user page): name, role
 * and organisation change at once, and so does the same e-mail address in
 * other case. A new e-mail address is mailed a confirmation link and changes when its
 * owner follows it ({@link requestEmailChange}), unless `outOfBand`: the
 * administrator confirmed it with its owner another way, and it changes at
 * once, audited as such. Administrators change their own address on their
 * account page, with their password. Refused addresses change nothing.
 */
export async function editUser(
  ctx: SignonContext,
  target: User,
  values: UserFormValues,
  by: { actorUid: string; outOfBand: boolean; origin: RequestOrigin; keepSessionIdHash: string | null; onMailFailure: (error: unknown) => void },
): Promise<EditUserResult> {
  const newEmail = values.email.toLowerCase() === target.email.toLowerCase() ? null : values.email;
  if (newEmail !== null && target.uid === by.actorUid) return { ok: false, emailError: "Change your own e-mail address on your account page, with your password" };
  const byLink = newEmail !== null && !by.outOfBand;
  if (byLink) {
    const usable = await checkNewEmail(ctx, target, newEmail);
    if (!usable.ok) return { ok: false, emailError: usable.message };
  }
  try {
    await updateUserByUid(ctx, target.uid, byLink ? { ...values, email: target.email } : values, by.actorUid, by.origin, by.keepSessionIdHash);
  } catch (error) {
    if (error instanceof AccountError) return { ok: false, emailError: error.message };
    throw error;
  }
  if (!byLink) return { ok: true, confirmationSentTo: null };
  const requested = await requestEmailChange(ctx, target, newEmail, by.actorUid, by.origin, by.onMailFailure);
  return requested.ok ? { ok: true, confirmationSentTo: requested.newEmail } : { ok: false, emailError: requested.message };
}
