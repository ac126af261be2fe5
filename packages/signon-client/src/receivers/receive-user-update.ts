import type { UserStore } from "../storage/user-store.js";
import { userDetailsFromJson, type SignonUser, type SignonUserJson } from "../user.js";

/**
 * Applies a `PUT /users/{uid}` push: creates the user or replaces the details
 * and permissions Sign-on sent. A user Sign-on signed out stays signed out.
 *
 * @see /work/shared/spec/DECISIONS.md S13
 */
export function receiveUserUpdate(users: UserStore, user: SignonUserJson): Promise<SignonUser> {
  return users.upsert(userDetailsFromJson(user));
}
