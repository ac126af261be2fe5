import { randomUUID } from "node:crypto";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { AccountError, updateUserByUid } from "../accounts/manage-users.js";
import { isAuthenticationMethod, showsSecondFactor, type AuthenticationMethod } from "../accounts/sessions.js";
import { normaliseEmail } from "../accounts/sign-in-limits.js";
import { grantDefaultPermissions } from "../applications/default-permissions.js";
import { pushesCommitted } from "../pushes/queue.js";
import {
  findUpstreamSubjectOfUser,
  findUserOfUpstreamSubject,
  insertUpstreamIdentity,
  touchUpstreamIdentity,
  type IdentityProvider,
} from "../repositories/identity-providers.js";
import { findUserByEmail, findUserByUid, insertUser, type User } from "../repositories/users.js";
import { isUniqueViolation } from "../repositories/unique-violation.js";

/** Who the provider says signed in, whatever the protocol. */
export interface UpstreamPerson {
  /** The provider's stable identifier of the person (`sub`, a persistent SAML `NameID`). */
  subject: string;
  email: string | null;
  /** The provider vouches that the person controls `email`. */
  emailVerified: boolean;
  name: string | null;
  /** `amr` values (SAML: mapped from the authentication context). */
  amr: readonly string[];
  /** `acr` (SAML: the `AuthnContextClassRef`). */
  acr: string | null;
  /** The provider's session (`sid`, SAML `SessionIndex`), for its logout. */
  sessionId: string | null;
}

/** Why a person the provider vouched for does not sign in; each is an event and a page. */
export type UpstreamRefusal =
  | "email_missing"
  | "email_unverified"
  | "domain_not_connected"
  | "other_organisation"
  | "no_account"
  | "linked_elsewhere"
  | "api_user"
  | "suspended";

export type UpstreamPersonResult =
  | { ok: true; user: User; methods: AuthenticationMethod[]; secondFactor: boolean }
  | { ok: false; reason: UpstreamRefusal; userUid: string | null };

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf("@") + 1).toLowerCase();
}

/** A name fit to keep: printable, at most 255 characters; `null` when the provider gave none. */
function usableName(name: string | null): string | null {
  const cleaned = [...(name ?? "")].filter((character) => character.charCodeAt(0) >= 0x20 && character.charCodeAt(0) !== 0x7f).join("").trim().slice(0, 255);
  return cleaned === "" ? null : cleaned;
}

/**
 * The Sign-on account of the person a provider vouched for. Once linked, by the provider's subject alone. The first
 * time, by e-mail: only an address the provider says is verified, at one of the domains the organisation owns, of an
 * account of that organisation (or of none) that no other subject of the provider holds; then the link is kept. With
 * the provider's `create_accounts`, a person Sign-on does not know gets an account in the organisation, with the
 * applications' default permissions. A name or verified address that changed upstream is taken over, and pushed to
 * the applications as any change is.
 */
export async function resolveUpstreamPerson(
  ctx: SignonContext,
  provider: IdentityProvider,
  person: UpstreamPerson,
  origin: RequestOrigin,
): Promise<UpstreamPersonResult> {
  const now = ctx.now();
  const email = person.email === null ? null : normaliseEmail(person.email);
  const verifiedEmail = email !== null && person.emailVerified && provider.domains.includes(domainOf(email)) ? email : null;
  let user: User | null = null;
  const linkedUid = await findUserOfUpstreamSubject(ctx.db, provider.id, person.subject);
  if (linkedUid !== null) {
    user = await findUserByUid(ctx.db, linkedUid);
  } else {
    if (email === null) return { ok: false, reason: "email_missing", userUid: null };
    if (!person.emailVerified) return { ok: false, reason: "email_unverified", userUid: null };
    if (verifiedEmail === null) return { ok: false, reason: "domain_not_connected", userUid: null };
    user = await findUserByEmail(ctx.db, verifiedEmail);
    if (user === null) {
      if (!provider.createAccounts) return { ok: false, reason: "no_account", userUid: null };
      user = await createUpstreamAccount(ctx, provider, person, verifiedEmail, origin);
      if (user === null) return { ok: false, reason: "linked_elsewhere", userUid: null };
    } else {
      if (user.organisationId !== null && user.organisationId !== provider.organisationId) return { ok: false, reason: "other_organisation", userUid: user.uid };
      if (user.isApiUser) return { ok: false, reason: "api_user", userUid: user.uid };
      if ((await findUpstreamSubjectOfUser(ctx.db, provider.id, user.uid)) !== null) return { ok: false, reason: "linked_elsewhere", userUid: user.uid };
      const linked = user;
      const stored = await ctx.db
        .transaction(async (tx) => {
          await insertUpstreamIdentity(tx, { providerId: provider.id, subject: person.subject, userUid: linked.uid, linkedAt: now, lastSeenAt: now });
          await audit(tx, { action: "upstream_identity_linked", at: now, actorUid: linked.uid, subjectUid: linked.uid, origin, details: { provider_id: provider.id, by: "email" } });
          return true;
        })
        .catch((error: unknown) => {
          if (isUniqueViolation(error)) return false;
          throw error;
        });
      if (!stored) return { ok: false, reason: "linked_elsewhere", userUid: linked.uid };
    }
  }
  if (user === null) return { ok: false, reason: "no_account", userUid: null };
  // Moved to another organisation since it was linked: this provider no longer speaks for it.
  if (user.organisationId !== null && user.organisationId !== provider.organisationId) return { ok: false, reason: "other_organisation", userUid: user.uid };
  if (user.isApiUser) return { ok: false, reason: "api_user", userUid: user.uid };
  if (user.suspendedAt !== null) return { ok: false, reason: "suspended", userUid: user.uid };
  await touchUpstreamIdentity(ctx.db, provider.id, person.subject, now);
  user = await takeOverChanges(ctx, user, usableName(person.name), verifiedEmail, origin);
  const methods = [...new Set(person.amr.filter(isAuthenticationMethod))];
  // An `acr` the organisation counts as a second factor is recorded as `mfa`, so that the session and applications' ID tokens say so.
  const byContext = person.acr !== null && provider.secondFactorContexts.includes(person.acr);
  if (byContext && !showsSecondFactor(methods)) methods.push("mfa");
  return { ok: true, user, methods, secondFactor: showsSecondFactor(methods) };
}

/** A name or verified address that changed at the provider, taken over (and pushed); an address another account holds is left as it was. */
async function takeOverChanges(ctx: SignonContext, user: User, name: string | null, verifiedEmail: string | null, origin: RequestOrigin): Promise<User> {
  const change: { name?: string; email?: string } = {};
  if (name !== null && name !== user.name) change.name = name;
  if (verifiedEmail !== null && verifiedEmail !== user.email.toLowerCase()) {
    const holder = await findUserByEmail(ctx.db, verifiedEmail);
    if (holder === null) change.email = verifiedEmail;
  }
  if (Object.keys(change).length === 0) return user;
  try {
    return (await updateUserByUid(ctx, user.uid, change, user.uid, origin)) ?? user;
  } catch (error) {
    // A name or address Sign-on's own checks refuse stays as it was; the sign-in goes on.
    if (error instanceof AccountError) return user;
    throw error;
  }
}

/** A new account in the provider's organisation, linked to the subject, with the default permissions; `null` if the address was taken meanwhile. */
async function createUpstreamAccount(ctx: SignonContext, provider: IdentityProvider, person: UpstreamPerson, email: string, origin: RequestOrigin): Promise<User | null> {
  const now = ctx.now();
  try {
    const created = await ctx.db.transaction(async (tx) => {
      const user = await insertUser(tx, {
        uid: randomUUID(),
        email,
        name: usableName(person.name) ?? email.slice(0, email.indexOf("@")),
        role: "normal",
        passwordHash: null,
        organisationId: provider.organisationId,
        createdAt: now,
        updatedAt: now,
      });
      await audit(tx, { action: "user_created", at: now, actorUid: null, subjectUid: user.uid, origin, details: { role: user.role, through: "identity_provider", provider_id: provider.id } });
      await insertUpstreamIdentity(tx, { providerId: provider.id, subject: person.subject, userUid: user.uid, linkedAt: now, lastSeenAt: now });
      await audit(tx, { action: "upstream_identity_linked", at: now, actorUid: user.uid, subjectUid: user.uid, origin, details: { provider_id: provider.id, by: "creation" } });
      await grantDefaultPermissions(tx, { userUid: user.uid, now, actorUid: null, origin });
      return user;
    });
    pushesCommitted(ctx);
    return created;
  } catch (error) {
    if (isUniqueViolation(error)) return null;
    throw error;
  }
}
