/** Anything that carries this application's permission names. */
export interface HasPermissions {
  permissions: readonly string[];
}

/** True when the user holds `permission` on this application. */
export function hasPermission(user: HasPermissions | null | undefined, permission: string): boolean {
  return user?.permissions.includes(permission) ?? false;
}

/** True when the user holds at least one of `permissions` (false for an empty list). */
export function hasAnyPermission(user: HasPermissions | null | undefined, permissions: readonly string[]): boolean {
  return permissions.some((permission) => hasPermission(user, permission));
}

/** True when the user holds every one of `permissions` (and is known, for an empty list). */
export function hasAllPermissions(user: HasPermissions | null | undefined, permissions: readonly string[]): boolean {
  return user != null && permissions.every((permission) => hasPermission(user, permission));
}
