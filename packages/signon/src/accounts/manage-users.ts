import { grantDefaultPermissions } from "../applications/default-permissions.js";
import { randomUUID } from "node:crypto";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { deletePendingEmailChange } from "../repositories/email-changes.js";
import { revokeGrantsOfUser } from "../repositories/grants.js";
import { deleteSessionsOfUser } from "../repositories/sessions.js";
import { findUserByEmail, findUserByUid, insertUser, updateUser, type User } from "../repositories/users.js";
import { listApplicationsPushedAboutUser, queuePushes } from "../repositories/push-deliveries.js";
import { lockUnsuspendedUser } from "../repositories/suspension-lock.js";
import { pushesCommitted } from "../pushes/queue.js";
import { emailPolicyProblem } from "./email-policy.js";
import { endSignInsEverywhere } from "./end-sign-ins-everywhere.js";
import { sendMailInBackground } from "../mail/send-mail.js";
import { createAccountLink } from "./account-links.js";
import { formatTime } from "../time-format.js";
import { hashPassword } from "./password.js";
import { isUniqueViolation } from "../repositories/unique-violation.js";
import { clearAccountLock } from "./sign-in-limits.js";
import { newPasswordProblem } from "./password-policy.js";

/** A refused account change, with a message for the operator. */
export class AccountError extends Error {}

export const roles = ["superadmin", "admin", "super_organisation_admin", "organisation_admin", "normal"] as const;
export type Role = (typeof roles)[number];

const emailPattern = /^[^\s@]+@[^\s@]+$/;

export interface NewPerson {
  email: string;
  name: string;
  role?: Role | undefined;
  /** Must pass the password policy (`checkNewPassword`), as a password chosen on the web must. */
  password?: string | undefined;
  /** Id of the user's organisation. */
  organisationId?: string | undefined;
}

/**
 * Creates a person's account (S18); without a password they cannot sign in
 * until one is set. A password is held to the policy the web's forms apply
 * (`checkNewPassword`, with the same message); a refused one creates
 * nothing. `origin`: where the request came from, for the audit
 * event (none from the command line).
 */
export async function createUser(
  ctx: SignonContext,
  person: NewPerson,
  actorUid: string | null = null,
  origin: RequestOrigin | null = null,
): Promise<User> {
  const email = checkEmail(person.email);
  const name = checkName(person.name);
  const refused = emailPolicyProblem(ctx.config.emailPolicy, email);
  if (refused !== null) throw new AccountError(refused);
  if (person.password !== undefined) {
    const weak = await newPasswordProblem(ctx, { email, name }, person.password);
    if (weak !== null) throw new AccountError(weak);
  }
  const taken = () => new AccountError(`A user with e-mail ${email} already exists`);
  if (await findUserByEmail(ctx.db, email)) throw taken();
  const passwordHash = person.password === undefined ? null : await hashPassword(person.password, ctx.config.passwordHashing);
  const now = ctx.now();
  // The same address submitted twice at once: the second insert waits for the first and then finds the address taken.
  const created = await inserting(taken, () => ctx.db.transaction(async (tx) => {
    const user = await insertUser(tx, {
      uid: randomUUID(),
      email,
      name,
      role: person.role ?? "normal",
      passwordHash,
      organisationId: person.organisationId ?? null,
      createdAt: now,
      updatedAt: now,
    });
    await audit(tx, { action: "user_created", at: now, actorUid, subjectUid: user.uid, origin, details: { role: user.role } });
    // Someone created with a password is a new user now; an invited one when they accept.
    if (passwordHash !== null) await grantDefaultPermissions(tx, { userUid: user.uid, now, actorUid, origin });
    return user;
  }));
  pushesCommitted(ctx);
  return created;
}

/** Runs `insert`; a unique violation (a concurrent insert of the same key won) becomes the refusal `taken()` makes. */
export async function inserting<T>(taken: () => Error, insert: () => Promise<T>): Promise<T> {
  try {
    return await insert();
  } catch (error) {
    if (isUniqueViolation(error)) throw taken();
    throw error;
  }
}

/**
 * Creates an API user (S17): a non-human account that never signs in and
 * holds pre-issued tokens. `origin` is recorded in the audit event.
 */
export async function createApiUser(
  ctx: SignonContext,
  account: { email: string; name: string },
  actorUid: string | null = null,
  origin: RequestOrigin | null = null,
): Promise<User> {
  const email = checkEmail(account.email);
  const name = checkName(account.name);
  const taken = () => new AccountError(`A user with e-mail ${email} already exists`);
  if (await findUserByEmail(ctx.db, email)) throw taken();
  const now = ctx.now();
  return inserting(taken, () => ctx.db.transaction(async (tx) => {
    const user = await insertUser(tx, { uid: randomUUID(), email, name, isApiUser: true, createdAt: now, updatedAt: now });
    await audit(tx, { action: "api_user_created", at: now, actorUid, subjectUid: user.uid, origin });
    return user;
  }));
}

/** Finds a user by e-mail or says plainly that there is none. */
export async function requireUserByEmail(ctx: SignonContext, email: string): Promise<User> {
  const user = await findUserByEmail(ctx.db, email);
  if (!user) throw new AccountError(`No user has e-mail ${email}`);
  return user;
}

/**
 * Suspends a user (S18): records the reason, ends their sessions, revokes
 * every token they hold and queues a PUT then a reauth to each of their
 * applications (S13), in one transaction. `origin`: where the request came
 * from, for the audit event (none from the command line).
 */
export async function suspendUser(
  ctx: SignonContext,
  email: string,
  reason: string,
  actorUid: string | null = null,
  origin: RequestOrigin | null = null,
): Promise<User> {
  const trimmed = reason.trim();
  if (trimmed === "") throw new AccountError("Suspension needs a reason");
  const user = await requireUserByEmail(ctx, email);
  if (user.suspendedAt !== null) throw new AccountError(`${user.email} is already suspended`);
  const now = ctx.now();
  const suspended = await ctx.db.transaction(async (tx) => {
    // Suspended meanwhile by another request or instance (whose transaction this waited for): nothing more to do.
    if (!(await lockUnsuspendedUser(tx, user.uid))) throw new AccountError(`${user.email} is already suspended`);
    const updated = await updateUser(tx, user.uid, { suspendedAt: now, suspensionReason: trimmed, updatedAt: now });
    await deleteSessionsOfUser(tx, user.uid);
    await revokeGrantsOfUser(tx, user.uid, now);
    // The event names the applications told, by the rule the pushes below are queued by (and the confirmation page lists).
    const { fanOut } = ctx.config.pushes;
    const told = await listApplicationsPushedAboutUser(tx, user.uid, fanOut);
    await audit(tx, { action: "user_suspended", at: now, actorUid, subjectUid: user.uid, origin, details: { reason: trimmed, told, fan_out: fanOut } });
    if (!updated) throw new AccountError(`No user has e-mail ${email}`);
    await queuePushes(tx, { userUid: user.uid, kinds: ["update", "reauth"], targets: { applicationsOfUser: fanOut }, now });
    return updated;
  });
  pushesCommitted(ctx);
  return suspended;
}

/** How an administrator lifts a suspension: with `requireNewPassword`, the stored password stops working and a reset link is mailed. */
export interface UnsuspendOptions {
  requireNewPassword?: boolean | undefined;
  /** Where a reset mail that could not be sent is reported (for the log; it never carries the link). */
  onMailFailure?: ((error: unknown) => void) | undefined;
}

/**
 * Lifts a suspension, and any lock from wrong passwords; queues a PUT to each
 * of the user's applications (S13), and records when, so that the inactivity
 * job leaves the person alone for a week. With `requireNewPassword` the
 * stored password no longer signs in (until a new one is set through a
 * mailed link) and a password reset link is mailed to the person, in the
 * same transaction; without it the stored password signs in again (even if
 * an earlier unsuspension required a new one). `origin` is recorded in the audit event
 * (`user_unsuspended`, with `new_password_required`).
 */
export async function unsuspendUser(
  ctx: SignonContext,
  email: string,
  actorUid: string | null = null,
  origin: RequestOrigin | null = null,
  options: UnsuspendOptions = {},
): Promise<User> {
  const user = await requireUserByEmail(ctx, email);
  if (user.suspendedAt === null) throw new AccountError(`${user.email} is not suspended`);
  // Someone who never set a password (invited, not accepted yet) has none to replace.
  const requireNewPassword = options.requireNewPassword === true && !user.isApiUser && user.passwordHash !== null;
  const now = ctx.now();
  const { unsuspended, link } = await ctx.db.transaction(async (tx) => {
    const updated = await updateUser(tx, user.uid, {
      suspendedAt: null,
      suspensionReason: null,
      unsuspendedAt: now,
      newPasswordRequired: requireNewPassword,
      updatedAt: now,
    });
    await clearAccountLock(tx, user, now, "every");
    await audit(tx, { action: "user_unsuspended", at: now, actorUid, subjectUid: user.uid, origin, details: { new_password_required: requireNewPassword } });
    if (!updated) throw new AccountError(`No user has e-mail ${email}`);
    await queuePushes(tx, { userUid: user.uid, kinds: ["update"], targets: { applicationsOfUser: ctx.config.pushes.fanOut }, now });
    return { unsuspended: updated, link: requireNewPassword ? await createAccountLink(tx, user.uid, "password_reset", now) : null };
  });
  pushesCommitted(ctx);
  if (link) {
    await sendMailInBackground(
      ctx,
      {
        to: unsuspended.email,
        subject: "Choose a new password for Tessera Sign-on",
        text: [
          `Hello ${unsuspended.name},`,
          "",
          "Your Tessera Sign-on account is no longer suspended. Before you sign in again, choose a new password here:",
          "",
          `${ctx.config.publicUrl}/password-reset/${link.token}`,
          "",
          `The link works once and until ${formatTime(link.expiresAt)}. After that, ask for a new one with "Forgotten your password?" on the sign-in page.`,
          "Your previous password no longer works.",
        ].join("\n"),
      },
      options.onMailFailure ?? (() => undefined),
    );
  }
  return unsuspended;
}

/** A change of a user's name, e-mail address or organisation; `organisationId: null` removes the organisation. */
export interface UserDetailsChange {
  name?: string | undefined;
  email?: string | undefined;
  organisationId?: string | null | undefined;
}

/**
 * Changes a user's name, e-mail address or organisation and, when anything
 * changed, queues a PUT to each of their applications (S13), in one
 * transaction. A new e-mail address applies at once (the operator's command,
 * or an administrator who confirmed it out of band; people and other
 * administrators go through `requestEmailChange`), is audited as
 * `email_change_confirmed` out of band, replaces any pending change, and
 * ends every sign-in of a person (S18) but the session `keepSessionIdHash`.
 */
export async function updateUserDetails(
  ctx: SignonContext,
  email: string,
  change: UserDetailsChange,
  actorUid: string | null = null,
  origin: RequestOrigin | null = null,
  keepSessionIdHash: string | null = null,
): Promise<User> {
  const user = await requireUserByEmail(ctx, email);
  return changeUser(ctx, user, change, actorUid, origin, keepSessionIdHash);
}

/**
 * `updateUserDetails` for a user found by uid, which can also change the
 * role (audited as `role_changed`; the role is not part of what applications
 * receive, so it queues no push). Everything is checked before anything is
 * written, and written in one transaction. `null` when no user has this uid.
 * `origin` is recorded in the audit events.
 */
export async function updateUserByUid(
  ctx: SignonContext,
  uid: string,
  change: UserDetailsChange & { role?: Role | undefined },
  actorUid: string | null = null,
  origin: RequestOrigin | null = null,
  keepSessionIdHash: string | null = null,
): Promise<User | null> {
  const user = await findUserByUid(ctx.db, uid);
  return user ? changeUser(ctx, user, change, actorUid, origin, keepSessionIdHash) : null;
}

async function changeUser(
  ctx: SignonContext,
  user: User,
  change: UserDetailsChange & { role?: Role | undefined },
  actorUid: string | null,
  origin: RequestOrigin | null,
  keepSessionIdHash: string | null,
): Promise<User> {
  const changes: { name?: string; email?: string; organisationId?: string | null } = {};
  if (change.name !== undefined && checkName(change.name) !== user.name) changes.name = checkName(change.name);
  if (change.email !== undefined && checkEmail(change.email) !== user.email) {
    const newEmail = checkEmail(change.email);
    const refused = emailPolicyProblem(ctx.config.emailPolicy, newEmail);
    if (refused !== null) throw new AccountError(refused);
    const holder = await findUserByEmail(ctx.db, newEmail);
    if (holder && holder.uid !== user.uid) throw new AccountError(`A user with e-mail ${newEmail} already exists`);
    changes.email = newEmail;
  }
  if (change.organisationId !== undefined && change.organisationId !== user.organisationId) changes.organisationId = change.organisationId;
  const newRole = change.role !== undefined && change.role !== user.role ? change.role : undefined;
  if (Object.keys(changes).length === 0 && newRole === undefined) return user;
  const now = ctx.now();
  const detailsChanged = Object.keys(changes).length > 0;
  const updated = await ctx.db.transaction(async (tx) => {
    const row = await updateUser(tx, user.uid, { ...changes, ...(newRole === undefined ? {} : { role: newRole }), updatedAt: now });
    if (!row) throw new AccountError(`No user has e-mail ${user.email}`);
    if (newRole !== undefined) {
      await audit(tx, { action: "role_changed", at: now, actorUid, subjectUid: user.uid, origin, details: { from: user.role, to: newRole } });
    }
    if (detailsChanged) {
      await audit(tx, { action: "user_updated", at: now, actorUid, subjectUid: user.uid, origin, details: { changed: Object.keys(changes).sort() } });
      await queuePushes(tx, { userUid: user.uid, kinds: ["update"], targets: { applicationsOfUser: ctx.config.pushes.fanOut }, now });
    }
    if (changes.email !== undefined) {
      // Applied at once, without a link: an operator or an administrator who confirmed the address out of band, or the same address in other case.
      await deletePendingEmailChange(tx, user.uid);
      const through = changes.email.toLowerCase() === user.email.toLowerCase() ? "case_only" : "out_of_band";
      await audit(tx, { action: "email_change_confirmed", at: now, actorUid, subjectUid: user.uid, origin, details: { from: user.email, to: changes.email, through } });
      await endSignInsEverywhere(tx, { user, cause: "email_changed", now, fanOut: ctx.config.pushes.fanOut, keepSessionIdHash, actorUid, origin });
    }
    return row;
  });
  if (detailsChanged) pushesCommitted(ctx);
  return updated;
}

/**
 * Lifts the lock of an account before its hour is up and forgets the failed
 * sign-ins counted against its address, so every source address that was
 * refused for it may try again (S15). `origin` is recorded in the audit event.
 */
export async function unlockUser(ctx: SignonContext, email: string, actorUid: string | null = null, origin: RequestOrigin | null = null): Promise<User> {
  const user = await requireUserByEmail(ctx, email);
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
    await clearAccountLock(tx, user, now, "every");
    await audit(tx, { action: "account_unlocked", at: now, actorUid, subjectUid: user.uid, origin });
  });
  return user;
}

function checkEmail(raw: string): string {
  const email = raw.trim();
  if (!emailPattern.test(email) || email.length > 254) throw new AccountError(`Not an e-mail address: ${JSON.stringify(raw)}`);
  return email;
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (name === "" || name.length > 200) throw new AccountError("A name has 1 to 200 characters");
  return name;
}
