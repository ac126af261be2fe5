import { grantDefaultPermissions } from "../applications/default-permissions.js";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { SignonDatabase } from "../db/database.js";
import { sendMail } from "../mail/send-mail.js";
import { grantPermissions } from "../applications/permissions.js";
import { pushesCommitted } from "../pushes/queue.js";
import { findOrganisationSummary } from "../repositories/account-overview.js";
import { deleteInvitationPermissions, insertInvitationPermissions, listInvitationPermissions } from "../repositories/invitation-permissions.js";
import { listLiveApplications } from "../repositories/user-form-choices.js";
import { findUserByUid, recordInvitationSent, type User } from "../repositories/users.js";
import { formatTime } from "../time-format.js";
import { assignableRoles, grantablePermissions, mayAssignOrganisation, mayListUsers, mayManageUser, type Actor } from "../web/policy.js";
import { accountLinkLifetimeSeconds, createAccountLink } from "./account-links.js";
import { setPasswordThroughLink, type LinkPasswordResult } from "./link-password.js";
import { AccountError, createUser, type Role } from "./manage-users.js";
import { boxValue, type PermissionGridRow } from "./permission-grid.js";

/** Who is invited: their e-mail address, name, role, organisation (`null`: none) and the permissions to grant on acceptance. */
export interface Invitation {
  email: string;
  name: string;
  role: Role;
  organisationId: string | null;
  /** Boxes of the permission grid (`<application id>:<permission>`), granted when the invitation is accepted. */
  permissions?: readonly string[] | undefined;
}

/**
 * What became of an invitation: the invited user and, when the mail could not
 * be sent, the error (for the log; the account and its link are kept, and
 * "Resend invitation" sends a new link).
 */
export interface InvitationOutcome {
  user: User;
  mailFailure?: unknown;
}

/** A permission chosen on an invitation, checked. */
export interface ChosenPermission {
  applicationId: string;
  applicationName: string;
  permission: string;
}

/**
 * Checks the permission boxes ticked on an invitation: each must be a
 * permission of a live application that the actor may grant (`null`: the
 * operator's command, who may grant any). Throws `AccountError` naming the
 * first box that is not.
 */
export async function checkInvitationPermissions(db: SignonDatabase, actor: Actor | null, values: readonly string[]): Promise<ChosenPermission[]> {
  if (values.length === 0) return [];
  const applications = await listLiveApplications(db);
  const chosen = new Map<string, ChosenPermission>();
  for (const value of values) {
    const at = value.indexOf(":");
    const applicationId = at < 0 ? "" : value.slice(0, at).toLowerCase();
    const permission = value.slice(at + 1);
    const application = applications.find((candidate) => candidate.id === applicationId);
    if (application && actor === null && !application.supportedPermissions.includes(permission)) {
      throw new AccountError(`${application.name} does not support ${permission} (it supports ${application.supportedPermissions.join(", ")})`);
    }
    if (!application || !application.supportedPermissions.includes(permission)) throw new AccountError("Choose permissions from the grid only");
    const grantable = actor === null ? application.supportedPermissions : grantablePermissions(actor, application);
    if (!grantable.includes(permission)) throw new AccountError(`You cannot grant ${permission} on ${application.name}`);
    chosen.set(boxValue(application.id, permission), { applicationId: application.id, applicationName: application.name, permission });
  }
  return [...chosen.values()];
}

/**
 * The permission grid of the invite forms: the live applications on which
 * the actor may grant something, with only those permissions, `ticked` ones
 * checked.
 */
export async function invitationGrid(db: SignonDatabase, actor: Actor, ticked: readonly string[]): Promise<PermissionGridRow[]> {
  const wanted = new Set(ticked.map((value) => value.toLowerCase()));
  const applications = await listLiveApplications(db);
  return applications
    .map((application) => ({
      applicationId: application.id,
      applicationName: application.name,
      boxes: grantablePermissions(actor, application).map((permission) => ({
        value: boxValue(application.id, permission),
        permission,
        held: wanted.has(boxValue(application.id, permission).toLowerCase()),
        editable: true,
      })),
    }))
    .filter((row) => row.boxes.length > 0);
}

/**
 * Checks that the actor (`null`: the operator's command) may invite with
 * this role, organisation and permissions; throws `AccountError` with a
 * message for the form when not.
 */
export async function checkInvitation(db: SignonDatabase, input: Invitation, actor: Actor | null): Promise<ChosenPermission[]> {
  if (actor !== null) {
    if (!mayListUsers(actor)) throw new AccountError("You cannot invite users");
    if (!assignableRoles(actor).includes(input.role)) throw new AccountError("You cannot give that role");
    if (!mayAssignOrganisation(actor, input.organisationId)) throw new AccountError("You cannot put users in that organisation");
  }
  const organisation = input.organisationId === null ? null : await findOrganisationSummary(db, input.organisationId);
  if (input.organisationId !== null && !organisation) throw new AccountError("That organisation does not exist");
  // A closed organisation takes nobody new, whoever invites.
  if (organisation?.closed) throw new AccountError(`${organisation.name} is closed: nobody new can join it`);
  return checkInvitationPermissions(db, actor, input.permissions ?? []);
}

/**
 * Invites a person: creates their account without a password, records the
 * permissions to grant when they accept, and makes a single-use link, valid
 * for 14 days, to set a password, in one transaction; then mails the link.
 * The actor must be allowed to give the role, the organisation and the
 * permissions (the same rules as the users pages). Refusals throw
 * `AccountError` with a message for the form; a mail that cannot be sent
 * comes back as `mailFailure`.
 */
export async function inviteUser(ctx: SignonContext, input: Invitation, actor: User, origin: RequestOrigin): Promise<InvitationOutcome> {
  const { user, link } = await ctx.db.transaction(async (tx) => createInvitation({ ...ctx, db: tx }, input, actor, origin));
  return mailInvitation(ctx, user, actor, link);
}

/**
 * The writes of an invitation, inside the caller's transaction (`ctx.db`):
 * checks it, creates the account, records the permissions to grant and the
 * link. `actor`: `null` for the operator's command. `batchId` is recorded in
 * the audit event of a batch's row.
 */
export async function createInvitation(
  ctx: SignonContext,
  input: Invitation,
  actor: User | null,
  origin: RequestOrigin | null,
  batchId?: string,
): Promise<{ user: User; link: { token: string; expiresAt: Date } }> {
  const chosen = await checkInvitation(ctx.db, input, actor);
  const created = await createUser(
    ctx,
    { email: input.email, name: input.name, role: input.role, organisationId: input.organisationId ?? undefined },
    actor?.uid ?? null,
    origin,
  );
  const now = ctx.now();
  await insertInvitationPermissions(ctx.db, created.uid, chosen, actor?.uid ?? null, now);
  const link = await createInvitationLink(ctx.db, now, created, actor, origin, false, {
    ...(chosen.length > 0 ? { permissions: chosen.map((one) => `${one.applicationName}: ${one.permission}`).sort() } : {}),
    ...(created.organisationId !== null ? { organisation_id: created.organisationId } : {}),
    ...(batchId !== undefined ? { batch_id: batchId } : {}),
  });
  return { user: created, link };
}

/**
 * Sends a new invitation link to someone who has not set a password yet; any
 * earlier link stops working. Refusals throw `AccountError`; a mail that
 * cannot be sent comes back as `mailFailure`.
 */
export async function resendInvitation(ctx: SignonContext, userUid: string, actor: User, origin: RequestOrigin): Promise<InvitationOutcome> {
  const user = await findUserByUid(ctx.db, userUid);
  if (!user || !mayManageUser(actor, user)) throw new AccountError("You cannot manage this user");
  if (user.isApiUser) throw new AccountError("API users do not sign in");
  if (user.passwordHash !== null) throw new AccountError(`${user.email} has already set a password`);
  if (user.suspendedAt !== null) throw new AccountError(`${user.email} is suspended`);
  const link = await ctx.db.transaction((tx) => createInvitationLink(tx, ctx.now(), user, actor, origin, true));
  return mailInvitation(ctx, user, actor, link);
}

/** Replaces the user's invitation link and records the invitation; run inside the caller's transaction. */
async function createInvitationLink(
  tx: SignonDatabase,
  now: Date,
  user: User,
  actor: Actor | null,
  origin: RequestOrigin | null,
  resent: boolean,
  details: Record<string, unknown> = {},
): Promise<{ token: string; expiresAt: Date }> {
  const link = await createAccountLink(tx, user.uid, "invitation", now);
  await recordInvitationSent(tx, user.uid, now);
  await audit(tx, {
    action: "user_invited",
    at: now,
    actorUid: actor?.uid ?? null,
    subjectUid: user.uid,
    origin,
    details: { role: user.role, resent, ...details },
  });
  return link;
}

/** Mails the invitation link; a failure comes back as `mailFailure`. `actor`: `null` for the operator's command. */
export async function mailInvitation(
  ctx: SignonContext,
  user: User,
  actor: (Actor & { name: string }) | null,
  link: { token: string; expiresAt: Date },
): Promise<InvitationOutcome> {
  const days = accountLinkLifetimeSeconds.invitation / 86_400;
  try {
    await sendMail(ctx, {
      to: user.email,
      subject: "You have been invited to Tessera Sign-on",
      text: [
        `Hello ${user.name},`,
        "",
        `${actor === null ? "The administrators of Tessera Sign-on have" : `${actor.name} has`} invited you to Tessera Sign-on. Choose your password here:`,
        "",
        `${ctx.config.publicUrl}/invitations/${link.token}`,
        "",
        `The link works once and until ${formatTime(link.expiresAt)} (${days} days).`,
        "If you did not expect this invitation, you can ignore this e-mail.",
      ].join("\n"),
    });
  } catch (error) {
    return { user, mailFailure: error };
  }
  return { user };
}

/** The result of accepting an invitation: the user, form errors, or why the link cannot be used. */
export type AcceptInvitationResult = LinkPasswordResult;

/**
 * Accepts an invitation: checks the chosen password against the policy, sets
 * it, records it in the password history, uses up the link and grants the
 * permissions chosen on the invitation (audited as granted by the inviting
 * administrator, and pushed to the applications like any grant, S13), in one
 * transaction. Permissions an application no longer supports, or of an
 * application retired since, are left out. The caller then signs the person in.
 */
export async function acceptInvitation(
  ctx: SignonContext,
  token: string,
  form: { password: string; confirmation: string },
  origin: RequestOrigin,
): Promise<AcceptInvitationResult> {
  const result = await setPasswordThroughLink(ctx, token, "invitation", form, origin, async (tx, user, now) => {
    await audit(tx, { action: "invitation_accepted", at: now, actorUid: user.uid, subjectUid: user.uid, origin });
    await grantDefaultPermissions(tx, { userUid: user.uid, now, actorUid: user.uid, origin });
    await grantInvitationPermissions({ ...ctx, db: tx, pushesQueued: undefined }, user, origin);
  });
  if (!result.ok) return result;
  pushesCommitted(ctx);
  const user = await findUserByUid(ctx.db, result.user.uid);
  if (!user) return { ok: false, link: "unknown" };
  return { ok: true, user };
}

/** Grants the permissions waiting for `user`'s acceptance, inside the caller's transaction (`ctx.db`), and forgets them. */
async function grantInvitationPermissions(ctx: SignonContext, user: User, origin: RequestOrigin): Promise<void> {
  const pending = await listInvitationPermissions(ctx.db, user.uid);
  if (pending.length === 0) return;
  const live = new Map((await listLiveApplications(ctx.db)).map((application) => [application.id, application]));
  const byApplication = new Map<string, { name: string; invitedByUid: string | null; permissions: string[] }>();
  for (const one of pending) {
    const application = live.get(one.applicationId);
    if (!application || !application.supportedPermissions.includes(one.permission)) continue;
    const entry = byApplication.get(one.applicationId) ?? { name: application.name, invitedByUid: one.invitedByUid, permissions: [] };
    entry.permissions.push(one.permission);
    byApplication.set(one.applicationId, entry);
  }
  for (const { name, invitedByUid, permissions } of byApplication.values()) {
    await grantPermissions(ctx, { email: user.email, application: name, permissions }, invitedByUid, origin);
  }
  await deleteInvitationPermissions(ctx.db, user.uid);
}

/** The permissions `userUid` receives on accepting their invitation, as `Application: permission`. */
export async function invitationPermissionsOf(ctx: SignonContext, userUid: string): Promise<string[]> {
  return (await listInvitationPermissions(ctx.db, userUid)).map((one) => `${one.applicationName}: ${one.permission}`);
}
