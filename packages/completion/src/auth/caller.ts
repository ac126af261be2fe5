/** A caller as Sign-on describes it: the holder of the bearer token. */
export interface SignonCaller {
  readonly uid: string;
  readonly email: string;
  readonly name: string;
  /** The caller's permissions on the completion application (`signin`, `staff`, `masquerade`, `admin`, ...). */
  readonly permissions: readonly string[];
}

/** Turns a bearer token into its caller; null when Sign-on does not accept the token. */
export interface CallerResolver {
  resolveCaller(bearerToken: string): Promise<SignonCaller | null>;
  /** How many callers were given from a remembered answer past its lifetime because Sign-on could not answer (`/metrics`). */
  readonly staleAnswers?: number;
}

/** Permission names on the completion application (C7, C15). */
export const PERMISSIONS = {
  staff: "staff",
  masquerade: "masquerade",
  admin: "admin",
} as const;

/** Whether the caller holds a permission. */
export function holds(caller: SignonCaller, permission: string): boolean {
  return caller.permissions.includes(permission);
}
