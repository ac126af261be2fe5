import type { Application } from "../repositories/applications.js";
import { grantablePermissions, isOrganisationScoped, type Actor } from "../web/policy.js";

/** What the rules below read of an application. */
export type OfferedApplication = Pick<Application, "id" | "supportedPermissions" | "delegatablePermissions" | "permissionsNotGrantableInUi" | "retired" | "apiOnly">;

/** Whether people use the application: it is neither retired nor API only (API-only ones are on no dashboard, grid or filter for people). */
export function isForPeople(application: Pick<Application, "retired" | "apiOnly">): boolean {
  return !application.retired && !application.apiOnly;
}

/**
 * The one rule of what the web interface offers `actor` to grant or revoke
 * on an application, used by every permission grid (a user's permissions,
 * the invite form, the batch-invitation form) and by the checks of what they
 * post: nothing on a retired or API-only application; never a permission
 * kept out of the web interface; for organisation admins and super
 * organisation admins, only the delegatable permissions of applications they
 * may sign in to themselves.
 */
export function offeredPermissions(actor: Actor, application: OfferedApplication): readonly string[] {
  return isForPeople(application) ? grantablePermissions(actor, application) : [];
}

/**
 * The permissions the users list may be filtered by: for organisation-scoped
 * administrators what they are offered (the rest is not theirs to look
 * after), for superadmins and admins every permission of an application
 * people use.
 */
export function filterablePermissions(actor: Actor, application: OfferedApplication): readonly string[] {
  if (isOrganisationScoped(actor)) return offeredPermissions(actor, application);
  return isForPeople(application) ? application.supportedPermissions : [];
}

/** The applications on which `choose` gives the actor something, with what it gives, in the given order. */
export function applicationsOffered<T extends OfferedApplication>(
  actor: Actor,
  applications: readonly T[],
  choose: (actor: Actor, application: T) => readonly string[] = offeredPermissions,
): { application: T; permissions: readonly string[] }[] {
  return applications.flatMap((application) => {
    const permissions = choose(actor, application);
    return permissions.length === 0 ? [] : [{ application, permissions }];
  });
}
