import type { SignonDatabase } from "../db/database.js";
import { listSignInApplications } from "../repositories/account-overview.js";
import { listOrganisationSubtreeIds } from "../repositories/organisations.js";
import type { User } from "../repositories/users.js";
import { isOrganisationScoped, type Actor } from "../web/policy.js";

/** A user as an actor of the rules in `web/policy.ts`, with what an organisation-scoped administrator administers. */
export type ScopedActor = User & Pick<Actor, "organisationScope" | "signInApplicationIds">;

/**
 * An organisation admin or super organisation admin with what they administer, read afresh: the applications they
 * may sign in to themselves (the only ones where they grant permissions) and, for a super organisation admin, the
 * organisations they manage. Anyone else as they are. Every path that checks what an actor may grant resolves the
 * actor through this: each web request's session, and a batch of invitations when its rows are invited.
 */
export async function withAdministrationScope(db: SignonDatabase, user: User): Promise<ScopedActor> {
  if (!isOrganisationScoped(user)) return user;
  const signInApplicationIds = (await listSignInApplications(db, user.uid)).map((application) => application.id);
  if (user.role !== "super_organisation_admin" || user.organisationId === null) return { ...user, signInApplicationIds };
  return { ...user, signInApplicationIds, organisationScope: await listOrganisationSubtreeIds(db, user.organisationId) };
}
