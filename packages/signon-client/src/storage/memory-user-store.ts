import type { SignonUser, SignonUserDetails } from "../user.js";
import type { UserStore } from "./user-store.js";

/** Users in a `Map`: for tests and single-process applications without a database. */
export class MemoryUserStore implements UserStore {
  readonly #users = new Map<string, SignonUser>();

  findByUid(uid: string): Promise<SignonUser | null> {
    const user = this.#users.get(uid);
    return Promise.resolve(user ? copy(user) : null);
  }

  upsert(details: SignonUserDetails, options: { remotelySignedOut?: boolean } = {}): Promise<SignonUser> {
    const existing = this.#users.get(details.uid);
    const user: SignonUser = {
      ...details,
      permissions: [...details.permissions],
      remotelySignedOut: options.remotelySignedOut ?? existing?.remotelySignedOut ?? false,
    };
    this.#users.set(user.uid, user);
    return Promise.resolve(copy(user));
  }

  markRemotelySignedOut(uid: string): Promise<boolean> {
    const user = this.#users.get(uid);
    if (!user) return Promise.resolve(false);
    user.remotelySignedOut = true;
    return Promise.resolve(true);
  }
}

function copy(user: SignonUser): SignonUser {
  return { ...user, permissions: [...user.permissions] };
}
