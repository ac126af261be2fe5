import type { SessionStore } from "../storage/session-store.js";
import type { UserStore } from "../storage/user-store.js";

/**
 * Applies a `POST /users/{uid}/reauth` push: flags the user as signed out by
 * Sign-on and ends their sessions here, so their next request starts sign-in.
 * An unknown user is nothing to do. Returns how many sessions ended.
 *
 * @see /work/shared/spec/DECISIONS.md S13
 */
export async function receiveReauth(users: UserStore, sessions: SessionStore, uid: string): Promise<number> {
  await users.markRemotelySignedOut(uid);
  return sessions.deleteForUser(uid);
}
