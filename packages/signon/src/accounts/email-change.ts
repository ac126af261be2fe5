import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { sendMailInBackground } from "../mail/send-mail.js";
import { pushesCommitted } from "../pushes/queue.js";
import {
  deletePendingEmailChange,
  findEmailChange,
  findPendingEmailChange,
  markEmailChangeConfirmed,
  replacePendingEmailChange,
  type EmailChange,
} from "../repositories/email-changes.js";
import { queuePushes } from "../repositories/push-deliveries.js";
import { isUniqueViolation } from "../repositories/unique-violation.js";
import { findUserByEmail, findUserByUid, updateUser, type User } from "../repositories/users.js";
import { randomHex, sha256Hex } from "../security/random.js";
import { formatTime } from "../time-format.js";
import { emailPolicyProblem } from "./email-policy.js";
import { endSignInsEverywhere } from "./end-sign-ins-everywhere.js";
import { verifyPassword } from "./password.js";
import type { FieldErrors } from "./password-policy.js";
import { countSignInFailureFor } from "./sign-in-limits.js";

/** How long the confirmation link mailed to a new e-mail address works. */
export const emailChangeLifetimeSeconds = 24 * 3600;

const emailShape = /^[^\s@]+@[^\s@]+$/;
const tokenPattern = /^[0-9a-f]{64}$/;

/** Why a new e-mail address was refused, in words for the person who typed it. */
export type NewEmailCheck = { ok: true; email: string } | { ok: false; message: string };

/**
 * Checks a new e-mail address for `user`: its shape, that it is not already
 * theirs, and that no other account has it (compared without case, as the
 * unique index of `users` does).
 */
export async function checkNewEmail(ctx: SignonContext, user: User, raw: string): Promise<NewEmailCheck> {
  const email = raw.trim();
  if (email === "") return { ok: false, message: "Enter the new e-mail address" };
  if (!emailShape.test(email) || email.length > 254) return { ok: false, message: "Enter an e-mail address like name@example.org" };
  if (email.toLowerCase() === user.email.toLowerCase()) return { ok: false, message: "This is already the account's e-mail address" };
  const refused = emailPolicyProblem(ctx.config.emailPolicy, email);
  if (refused !== null) return { ok: false, message: refused };
  const holder = await findUserByEmail(ctx.db, email);
  if (holder && holder.uid !== user.uid) return { ok: false, message: "Another account already uses this e-mail address" };
  return { ok: true, email };
}

/**
 * A person changing their own e-mail address (`/account/email`): the current
 * password must be right (a wrong one counts as a failed sign-in from this
 * address, S15, like the password change form), then the change is
 * requested as {@link requestEmailChange} does. Returns messages per field
 * (`email`, `current`) when refused.
 */
export async function requestOwnEmailChange(
  ctx: SignonContext,
  user: User,
  form: { email: string; current: string },
  origin: RequestOrigin,
  onMailFailure: (error: unknown) => void,
): Promise<{ ok: true; newEmail: string } | { ok: false; errors: FieldErrors }> {
  const errors: FieldErrors = {};
  const email = form.email.trim();
  if (email === "") errors.email = "Enter the new e-mail address";
  else if (!emailShape.test(email) || email.length > 254) errors.email = "Enter an e-mail address like name@example.org";
  if (form.current === "") errors.current = "Enter your current password";
  else if (!(await verifyPassword(user.passwordHash, form.current, ctx.config.passwordHashing))) {
    await countSignInFailureFor(ctx, { email: user.email, kind: "password", origin, now: ctx.now() }, onMailFailure);
    errors.current = "Your current password is not right";
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const requested = await requestEmailChange(ctx, user, email, user.uid, origin, onMailFailure);
  return requested.ok ? requested : { ok: false, errors: { email: requested.message } };
}

/**
 * Asks for `user`'s e-mail address to become `newEmail`: nothing changes
 * yet. Stores a single-use link (only its SHA-256 digest), valid 24 hours,
 * replacing any earlier pending change, audits `email_change_requested`,
 * mails the link to the new address and tells the old address, without the
 * link, that a change was asked for. `actorUid` is the person themselves or
 * the administrator who asked. The change applies when the person, signed
 * in, follows the link ({@link confirmEmailChange}).
 */
export async function requestEmailChange(
  ctx: SignonContext,
  user: User,
  newEmail: string,
  actorUid: string,
  origin: RequestOrigin | null,
  onMailFailure: (error: unknown) => void,
): Promise<{ ok: true; newEmail: string } | { ok: false; message: string }> {
  const checked = await checkNewEmail(ctx, user, newEmail);
  if (!checked.ok) return checked;
  const now = ctx.now();
  const token = randomHex();
  const expiresAt = new Date(now.getTime() + emailChangeLifetimeSeconds * 1000);
  await ctx.db.transaction(async (tx) => {
    await replacePendingEmailChange(tx, { tokenHash: sha256Hex(token), userUid: user.uid, newEmail: checked.email, requestedByUid: actorUid, expiresAt, createdAt: now });
    await audit(tx, { action: "email_change_requested", at: now, actorUid, subjectUid: user.uid, origin, details: { from: user.email, to: checked.email } });
  });
  const who = actorUid === user.uid ? "You" : "An administrator";
  const hours = emailChangeLifetimeSeconds / 3600;
  await sendMailInBackground(
    ctx,
    {
      to: checked.email,
      subject: "Confirm your new e-mail address for Tessera Sign-on",
      text: [
        `Hello ${user.name},`,
        "",
        `${who} asked for this address to become the e-mail address of your Tessera Sign-on account. To confirm it, follow this link and sign in to your account if asked:`,
        "",
        `${ctx.config.publicUrl}/account/email/${token}`,
        "",
        `The link works once and until ${formatTime(expiresAt)} (${hours} hours).`,
        "If you did not expect this, you can ignore this e-mail: nothing changes unless the link is followed.",
      ].join("\n"),
    },
    onMailFailure,
  );
  await sendMailInBackground(
    ctx,
    {
      to: user.email,
      subject: "Your Tessera Sign-on e-mail address is about to change",
      text: [
        `Hello ${user.name},`,
        "",
        `${who === "You" ? "Someone signed in to your account" : "An administrator"} asked to change the e-mail address of your Tessera Sign-on account to ${checked.email}.`,
        "It changes only when the link sent to that address is followed.",
        "",
        `If this was not you, sign in and cancel the change on your account page, ${ctx.config.publicUrl}/account, and change your password.`,
      ].join("\n"),
    },
    onMailFailure,
  );
  return { ok: true, newEmail: checked.email };
}

/** The user's pending e-mail change that still works, or `null`. */
export async function pendingEmailChange(ctx: SignonContext, userUid: string): Promise<EmailChange | null> {
  return findPendingEmailChange(ctx.db, userUid, ctx.now());
}

/** Cancels the user's pending e-mail change, audited as `email_change_cancelled`; `false` when there was none. */
export async function cancelEmailChange(ctx: SignonContext, user: User, actorUid: string, origin: RequestOrigin | null): Promise<boolean> {
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const cancelled = await deletePendingEmailChange(tx, user.uid);
    if (!cancelled) return false;
    await audit(tx, { action: "email_change_cancelled", at: now, actorUid, subjectUid: user.uid, origin, details: { from: user.email, to: cancelled.newEmail } });
    return true;
  });
}

/** What a confirmation link leads to: a usable pending change and its user, or why not. */
export type EmailChangeLinkState = { state: "usable"; change: EmailChange; user: User } | { state: "unknown" | "expired" | "used" };

/**
 * Looks a confirmation link up without using it. Unusable once confirmed,
 * after 24 hours, when a newer request or a cancellation replaced it
 * (unknown), or when its user is suspended (expired).
 */
export async function inspectEmailChange(ctx: SignonContext, token: string): Promise<EmailChangeLinkState> {
  if (!tokenPattern.test(token)) return { state: "unknown" };
  const change = await findEmailChange(ctx.db, sha256Hex(token));
  if (!change) return { state: "unknown" };
  if (change.confirmedAt !== null) return { state: "used" };
  if (change.expiresAt.getTime() <= ctx.now().getTime()) return { state: "expired" };
  const user = await findUserByUid(ctx.db, change.userUid);
  if (!user) return { state: "unknown" };
  if (user.suspendedAt !== null || user.isApiUser) return { state: "expired" };
  return { state: "usable", change, user };
}

export type ConfirmEmailChangeResult =
  | { ok: true; user: User }
  | { ok: false; link: "unknown" | "expired" | "used" }
  | { ok: false; refused: "another_person" | "taken" };

/**
 * Applies a pending e-mail change through its link, for the person it
 * belongs to, signed in (`session`); anyone else is refused. In one
 * transaction: uses up the link, checks again that no other account took
 * the address meanwhile, changes it, queues a PUT to each of the person's
 * applications (S13), audits `user_updated` and `email_change_confirmed`,
 * and ends every sign-in of theirs but this browser's session (S18).
 */
export async function confirmEmailChange(
  ctx: SignonContext,
  token: string,
  session: { user: User; idHash: string },
  origin: RequestOrigin,
): Promise<ConfirmEmailChangeResult> {
  const found = await inspectEmailChange(ctx, token);
  if (found.state !== "usable") return { ok: false, link: found.state };
  const { user, change } = found;
  if (user.uid !== session.user.uid) return { ok: false, refused: "another_person" };
  const holder = await findUserByEmail(ctx.db, change.newEmail);
  if (holder && holder.uid !== user.uid) return { ok: false, refused: "taken" };
  const now = ctx.now();
  let result: ConfirmEmailChangeResult;
  try {
    result = await ctx.db.transaction(async (tx): Promise<ConfirmEmailChangeResult> => {
      if (!(await markEmailChangeConfirmed(tx, sha256Hex(token), now))) return { ok: false, link: "used" };
      const updated = await updateUser(tx, user.uid, { email: change.newEmail, updatedAt: now });
      if (!updated) return { ok: false, link: "unknown" };
      const details = { from: user.email, to: change.newEmail, through: "link", requested_by: change.requestedByUid };
      await audit(tx, { action: "email_change_confirmed", at: now, actorUid: user.uid, subjectUid: user.uid, origin, details });
      await audit(tx, { action: "user_updated", at: now, actorUid: user.uid, subjectUid: user.uid, origin, details: { changed: ["email"] } });
      await queuePushes(tx, { userUid: user.uid, kinds: ["update"], targets: { applicationsOfUser: ctx.config.pushes.fanOut }, now });
      await endSignInsEverywhere(tx, { user, cause: "email_changed", now, fanOut: ctx.config.pushes.fanOut, keepSessionIdHash: session.idHash, actorUid: user.uid, origin });
      return { ok: true, user: updated };
    });
  } catch (error) {
    // Another account took the address between the check and the update: the unique index refuses it.
    if (isUniqueViolation(error)) return { ok: false, refused: "taken" };
    throw error;
  }
  if (result.ok) pushesCommitted(ctx);
  return result;
}
