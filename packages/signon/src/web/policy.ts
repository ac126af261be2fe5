import type { User } from "../repositories/users.js";

/**
 * Who may do what in the web interface. Every route checks these rules on
 * the server; pages only hide what a rule would refuse.
 *
 * - superadmin: everything.
 * - admin: users and their permissions, not applications, API users or organisations.
 * - organisation_admin: the users of their own organisation, and only permissions marked delegatable.
 * - normal: their own account.
 */
export type Actor = Pick<User, "uid" | "role" | "organisationId">;
export type ManagedUser = Pick<User, "uid" | "role" | "organisationId" | "isApiUser">;

/** Whether the actor sees the users section at all. */
export function mayListUsers(actor: Actor): boolean {
  return actor.role === "superadmin" || actor.role === "admin" || (actor.role === "organisation_admin" && actor.organisationId !== null);
}

/**
 * Whether the actor may view and change this user (details, suspension,
 * unlock, 2-step reset, permissions within `grantablePermissions`). API users
 * are managed on their own pages by superadmins. Nobody but a superadmin
 * manages a superadmin.
 */
export function mayManageUser(actor: Actor, target: ManagedUser): boolean {
  if (target.isApiUser) return actor.role === "superadmin";
  if (target.role === "superadmin" && actor.role !== "superadmin") return false;
  if (actor.role === "superadmin" || actor.role === "admin") return true;
  if (actor.role === "organisation_admin") {
    return actor.organisationId !== null && target.organisationId === actor.organisationId && target.role !== "admin";
  }
  return false;
}

/** Roles the actor may give (on invitation or edit). */
export function assignableRoles(actor: Actor): readonly User["role"][] {
  if (actor.role === "superadmin") return ["superadmin", "admin", "organisation_admin", "normal"];
  if (actor.role === "admin") return ["admin", "organisation_admin", "normal"];
  if (actor.role === "organisation_admin") return ["organisation_admin", "normal"];
  return [];
}

/** Whether the actor may put a user in this organisation (`null`: none). Organisation admins keep users in their own. */
export function mayAssignOrganisation(actor: Actor, organisationId: string | null): boolean {
  if (actor.role === "superadmin" || actor.role === "admin") return true;
  return actor.role === "organisation_admin" && organisationId !== null && organisationId === actor.organisationId;
}

/** The permissions of an application that the actor may grant or revoke in the web interface (never those kept out of it). */
export function grantablePermissions(
  actor: Actor,
  application: { supportedPermissions: readonly string[]; delegatablePermissions: readonly string[]; permissionsNotGrantableInUi?: readonly string[] },
): readonly string[] {
  const offered = application.supportedPermissions.filter((permission) => !(application.permissionsNotGrantableInUi ?? []).includes(permission));
  if (actor.role === "superadmin" || actor.role === "admin") return offered;
  if (actor.role === "organisation_admin") return offered.filter((permission) => application.delegatablePermissions.includes(permission));
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
