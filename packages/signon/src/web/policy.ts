import type { User } from "../repositories/users.js";

/**
 * Who may do what in the web interface. Every route checks these rules on
 * the server; pages only hide what a rule would refuse.
 *
 * - superadmin: everything.
 * - admin: users and their permissions, not applications, API users or organisations.
 * - super_organisation_admin: as an organisation admin, over their own organisation
 *   and every organisation under it (its subtree, `organisationScope`).
 * - organisation_admin: the users of their own organisation, and only permissions marked delegatable, on
 *   applications they may sign in to themselves.
 * - normal: their own account.
 */
export type Actor = Pick<User, "uid" | "role" | "organisationId"> & {
  /**
   * The organisations a super organisation admin manages: their own and every
   * one under it, as the session resolved them. Absent: their own only.
   */
  organisationScope?: readonly string[] | undefined;
  /**
   * The applications an organisation admin or super organisation admin may sign in to themselves (they hold
   * `signin` there), as the session resolved them: they grant and revoke permissions on these only. Absent: none.
   */
  signInApplicationIds?: readonly string[] | undefined;
};
export type ManagedUser = Pick<User, "uid" | "role" | "organisationId" | "isApiUser">;

/** Whether the actor administers people of some organisations only (an organisation admin or a super organisation admin). */
export function isOrganisationScoped(actor: Pick<Actor, "role">): boolean {
  return actor.role === "organisation_admin" || actor.role === "super_organisation_admin";
}

/**
 * The organisations whose people an organisation-scoped actor manages: their
 * own, and for a super organisation admin every one under it. Empty for an
 * actor without an organisation or without such a role.
 */
export function managedOrganisationIds(actor: Actor): readonly string[] {
  if (!isOrganisationScoped(actor) || actor.organisationId === null) return [];
  if (actor.role === "super_organisation_admin" && actor.organisationScope !== undefined) {
    // The scope always holds the actor's own organisation, whatever was passed.
    return actor.organisationScope.includes(actor.organisationId) ? actor.organisationScope : [actor.organisationId, ...actor.organisationScope];
  }
  return [actor.organisationId];
}

/** Roles an organisation-scoped actor may manage and give: their own and those below it. */
function scopedRoles(actor: Pick<Actor, "role">): readonly User["role"][] {
  if (actor.role === "super_organisation_admin") return ["super_organisation_admin", "organisation_admin", "normal"];
  if (actor.role === "organisation_admin") return ["organisation_admin", "normal"];
  return [];
}

/** Whether the actor sees the users section at all. */
export function mayListUsers(actor: Actor): boolean {
  return actor.role === "superadmin" || actor.role === "admin" || (isOrganisationScoped(actor) && actor.organisationId !== null);
}

/**
 * Whether the actor may view and change this user (details, suspension,
 * unlock, 2-step reset, permissions within `grantablePermissions`). API users
 * are managed on their own pages by superadmins. Nobody but a superadmin
 * manages a superadmin. Organisation admins and super organisation admins
 * manage people of their scope whose role is theirs or below.
 */
export function mayManageUser(actor: Actor, target: ManagedUser): boolean {
  if (target.isApiUser) return actor.role === "superadmin";
  if (target.role === "superadmin" && actor.role !== "superadmin") return false;
  if (actor.role === "superadmin" || actor.role === "admin") return true;
  if (isOrganisationScoped(actor)) {
    return target.organisationId !== null && managedOrganisationIds(actor).includes(target.organisationId) && scopedRoles(actor).includes(target.role);
  }
  return false;
}

/** Roles the actor may give (on invitation or edit). */
export function assignableRoles(actor: Actor): readonly User["role"][] {
  if (actor.role === "superadmin") return ["superadmin", "admin", "super_organisation_admin", "organisation_admin", "normal"];
  if (actor.role === "admin") return ["admin", "super_organisation_admin", "organisation_admin", "normal"];
  return scopedRoles(actor);
}

/**
 * Whether the actor may put a user in this organisation (`null`: none).
 * Organisation admins keep users in their own; super organisation admins
 * in their own or one under it. Whether the organisation is closed is the
 * form's check (a member may stay in a closed organisation).
 */
export function mayAssignOrganisation(actor: Actor, organisationId: string | null): boolean {
  if (actor.role === "superadmin" || actor.role === "admin") return true;
  return organisationId !== null && managedOrganisationIds(actor).includes(organisationId);
}

/**
 * The permissions of an application that the actor may grant or revoke in the web interface (never those kept out
 * of it). Organisation admins and super organisation admins: the delegatable ones, on an application they may sign
 * in to themselves.
 */
export function grantablePermissions(
  actor: Actor,
  application: { id: string; supportedPermissions: readonly string[]; delegatablePermissions: readonly string[]; permissionsNotGrantableInUi?: readonly string[] },
): readonly string[] {
  const offered = application.supportedPermissions.filter((permission) => !(application.permissionsNotGrantableInUi ?? []).includes(permission));
  if (actor.role === "superadmin" || actor.role === "admin") return offered;
  if (isOrganisationScoped(actor)) {
    if (!(actor.signInApplicationIds ?? []).includes(application.id)) return [];
    return offered.filter((permission) => application.delegatablePermissions.includes(permission));
  }
  return [];
}

/** Applications (create, edit, rotate, retire, push deliveries), API users and organisations: superadmins only. */
export function mayManageApplications(actor: Actor): boolean {
  return actor.role === "superadmin";
}

export function mayManageApiUsers(actor: Actor): boolean {
  return actor.role === "superadmin";
}

export function mayManageOrganisations(actor: Actor): boolean {
  return actor.role === "superadmin";
}
