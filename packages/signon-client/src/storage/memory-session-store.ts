import type { SessionRecord, SessionStore, SessionTokens } from "./session-store.js";

interface StoredSession {
  session: SessionRecord;
  refreshClaimedUntil: number | null;
}

/** Sessions in a `Map`: for tests and single-process applications without a database. */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, StoredSession>();

  create(session: SessionRecord): Promise<void> {
    this.#sessions.set(session.idDigest, { session: structuredClone(session), refreshClaimedUntil: null });
    return Promise.resolve();
  }

  find(idDigest: string, now: number): Promise<SessionRecord | null> {
    const stored = this.#sessions.get(idDigest);
    if (!stored || stored.session.expiresAt <= now) return Promise.resolve(null);
    return Promise.resolve(structuredClone(stored.session));
  }

  delete(idDigest: string): Promise<void> {
    this.#sessions.delete(idDigest);
    return Promise.resolve();
  }

  deleteForUser(uid: string): Promise<number> {
    let count = 0;
    for (const [idDigest, stored] of this.#sessions) {
      if (stored.session.uid === uid) {
        this.#sessions.delete(idDigest);
        count += 1;
      }
    }
    return Promise.resolve(count);
  }

  claimRefresh(idDigest: string, now: number, until: number): Promise<boolean> {
    const stored = this.#sessions.get(idDigest);
    const due = stored?.session.tokens != null && stored.session.tokens.refreshAt <= now;
    if (!stored || !due || (stored.refreshClaimedUntil !== null && stored.refreshClaimedUntil > now)) {
      return Promise.resolve(false);
    }
    stored.refreshClaimedUntil = until;
    return Promise.resolve(true);
  }

  saveTokens(idDigest: string, tokens: SessionTokens): Promise<void> {
    const stored = this.#sessions.get(idDigest);
    if (stored) {
      stored.session.tokens = { ...tokens };
      stored.refreshClaimedUntil = null;
    }
    return Promise.resolve();
  }

  deleteExpired(now: number): Promise<number> {
    let count = 0;
    for (const [idDigest, stored] of this.#sessions) {
      if (stored.session.expiresAt <= now) {
        this.#sessions.delete(idDigest);
        count += 1;
      }
    }
    return Promise.resolve(count);
  }
}
