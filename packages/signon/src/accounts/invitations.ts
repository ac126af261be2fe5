import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { SignonDatabase } from "../db/database.js";
import { sendMail } from "../mail/send-mail.js";
import { findOrganisationSummary } from "../repositories/account-overview.js";
import { findUserByUid, recordInvitationSent, type User } from "../repositories/users.js";
import { formatTime } from "../time-format.js";
import { assignableRoles, mayAssignOrganisation, mayListUsers, mayManageUser, type Actor } from "../web/policy.js";
import { accountLinkLifetimeSeconds, createAccountLink } from "./account-links.js";
import { setPasswordThroughLink, type LinkPasswordResult } from "./link-password.js";
import { AccountError, createUser, type Role } from "./manage-users.js";

/** Who is invited: their e-mail address, name, role and organisation (`null`: none). */
export interface Invitation {
  email: string;
  name: string;
  role: Role;
  organisationId: string | null;
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

/**
 * Invites a person: creates their account without a password and a
 * single-use link, valid for 7 days, to set one, in one transaction; then
 * mails the link. The actor must be allowed to give the role and the
 * organisation (the same rules as the users pages). Refusals throw
 * `AccountError` with a message for the form; a mail that cannot be sent
 * comes back as `mailFailure`.
 */
export async function inviteUser(ctx: SignonContext, input: Invitation, actor: User, origin: RequestOrigin): Promise<InvitationOutcome> {
  if (!mayListUsers(actor)) throw new AccountError("You cannot invite users");
  if (!assignableRoles(actor).includes(input.role)) throw new AccountError("You cannot give that role");
  if (!mayAssignOrganisation(actor, input.organisationId)) throw new AccountError("You cannot put users in that organisation");
  if (input.organisationId !== null && !(await findOrganisationSummary(ctx.db, input.organisationId))) {
    throw new AccountError("That organisation does not exist");
  }
  const { user, link } = await ctx.db.transaction(async (tx) => {
    // createUser's own transaction becomes a savepoint of this one.
    const created = await createUser(
      { ...ctx, db: tx },
      { email: input.email, name: input.name, role: input.role, organisationId: input.organisationId ?? undefined },
      actor.uid,
      origin,
    );
    return { user: created, link: await createInvitationLink(tx, ctx.now(), created, actor, origin, false) };
  });
  return mailInvitation(ctx, user, actor, link);
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
  actor: Actor,
  origin: RequestOrigin,
  resent: boolean,
): Promise<{ token: string; expiresAt: Date }> {
  const link = await createAccountLink(tx, user.uid, "invitation", now);
  await recordInvitationSent(tx, user.uid, now);
  await audit(tx, {
    action: "user_invited",
    at: now,
    actorUid: actor.uid,
    subjectUid: user.uid,
    origin,
    details: { role: user.role, resent },
  });
  return link;
}

async function mailInvitation(
  ctx: SignonContext,
  user: User,
  actor: Actor & { name: string },
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
        `${actor.name} has invited you to Tessera Sign-on. Choose your password here:`,
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
 * it, records it in the password history and uses up the link, in one
 * transaction. The caller then signs the person in.
 */
export async function acceptInvitation(
  ctx: SignonContext,
  token: string,
  form: { password: string; confirmation: string },
  origin: RequestOrigin,
): Promise<AcceptInvitationResult> {
  const result = await setPasswordThroughLink(ctx, token, "invitation", form, origin, async (tx, user, now) => {
    await audit(tx, { action: "invitation_accepted", at: now, actorUid: user.uid, subjectUid: user.uid, origin });
  });
  if (!result.ok) return result;
  const user = await findUserByUid(ctx.db, result.user.uid);
  if (!user) return { ok: false, link: "unknown" };
  return { ok: true, user };
}
