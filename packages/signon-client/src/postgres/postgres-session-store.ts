import { and, eq, gt, isNull, lte, or } from "drizzle-orm";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import type pg from "pg";
import { storeCall } from "./store-call.js";
import type { SessionRecord, SessionStore, SessionTokens } from "../storage/session-store.js";
import { sessions } from "./schema.js";

/** Sessions in `signon_client.sessions` (apply `signonClientMigrations` first). */
export class PostgresSessionStore implements SessionStore {
  readonly #db: NodePgDatabase;

  constructor(pool: pg.Pool) {
    this.#db = drizzle({ client: pool });
  }

  async create(session: SessionRecord): Promise<void> {
    return storeCall(async () => {
      await this.#db.insert(sessions).values({
        idDigest: session.idDigest,
        uid: session.uid,
        signInState: session.signIn?.state ?? null,
        signInCodeVerifier: session.signIn?.codeVerifier ?? null,
        signInReturnTo: session.signIn?.returnTo ?? null,
        ...tokenColumns(session.tokens),
        createdAt: new Date(session.createdAt),
        expiresAt: new Date(session.expiresAt),
      });
    });
  }

  async find(idDigest: string, now: number): Promise<SessionRecord | null> {
    return storeCall(async () => {
      const [row] = await this.#db
        .select()
        .from(sessions)
        .where(and(eq(sessions.idDigest, idDigest), gt(sessions.expiresAt, new Date(now))));
      return row ? toSession(row) : null;
    });
  }

  async delete(idDigest: string): Promise<void> {
    return storeCall(async () => {
      await this.#db.delete(sessions).where(eq(sessions.idDigest, idDigest));
    });
  }

  async deleteForUser(uid: string): Promise<number> {
    return storeCall(async () => {
      const rows = await this.#db
        .delete(sessions)
        .where(eq(sessions.uid, uid))
        .returning({ idDigest: sessions.idDigest });
      return rows.length;
    });
  }

  async claimRefresh(idDigest: string, now: number, until: number): Promise<boolean> {
    return storeCall(async () => {
      const rows = await this.#db
        .update(sessions)
        .set({ refreshClaimedUntil: new Date(until) })
        .where(
          and(
            eq(sessions.idDigest, idDigest),
            lte(sessions.refreshAt, new Date(now)),
            or(isNull(sessions.refreshClaimedUntil), lte(sessions.refreshClaimedUntil, new Date(now))),
          ),
        )
        .returning({ idDigest: sessions.idDigest });
      return rows.length > 0;
    });
  }

  async saveTokens(idDigest: string, tokens: SessionTokens): Promise<void> {
    return storeCall(async () => {
      await this.#db
        .update(sessions)
        .set({ ...tokenColumns(tokens), refreshClaimedUntil: null })
        .where(eq(sessions.idDigest, idDigest));
    });
  }

  async deleteExpired(now: number): Promise<number> {
    return storeCall(async () => {
      const rows = await this.#db
        .delete(sessions)
        .where(lte(sessions.expiresAt, new Date(now)))
        .returning({ idDigest: sessions.idDigest });
      return rows.length;
    });
  }
}

function tokenColumns(tokens: SessionTokens | null) {
  return {
    accessToken: tokens?.accessToken ?? null,
    refreshToken: tokens?.refreshToken ?? null,
    accessTokenExpiresAt: tokens ? new Date(tokens.expiresAt) : null,
    refreshAt: tokens ? new Date(tokens.refreshAt) : null,
  };
}

function toSession(row: typeof sessions.$inferSelect): SessionRecord {
  const signIn =
    row.signInState !== null && row.signInCodeVerifier !== null
      ? { state: row.signInState, codeVerifier: row.signInCodeVerifier, returnTo: row.signInReturnTo ?? "/" }
      : null;
  const tokens =
    row.accessToken !== null && row.accessTokenExpiresAt !== null && row.refreshAt !== null
      ? {
          accessToken: row.accessToken,
          refreshToken: row.refreshToken,
          expiresAt: row.accessTokenExpiresAt.getTime(),
          refreshAt: row.refreshAt.getTime(),
        }
      : null;
  return {
    idDigest: row.idDigest,
    uid: row.uid,
    signIn,
    tokens,
    createdAt: row.createdAt.getTime(),
    expiresAt: row.expiresAt.getTime(),
  };
}
