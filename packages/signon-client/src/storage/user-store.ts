import type { SignonUser, SignonUserDetails } from "../user.js";

/**
 * Where an application keeps the users Sign-on told it about. Implementations:
 * `MemoryUserStore` (tests, single process) and `PostgresUserStore`.
 * Storage returns `null` for "not found" and never throws HTTP errors.
 */
export interface UserStore {
  findByUid(uid: string): Promise<SignonUser | null>;
  /**
   * Creates or replaces the user's details. `remotelySignedOut` is set when
   * given; otherwise a new user gets `false` and an existing one keeps its flag.
   */
  upsert(details: SignonUserDetails, options?: { remotelySignedOut?: boolean }): Promise<SignonUser>;
  /** Flags the user as signed out by Sign-on; `false` when the user is unknown. */
  markRemotelySignedOut(uid: string): Promise<boolean>;
}
