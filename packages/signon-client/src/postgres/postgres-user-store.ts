import { eq, sql } from "drizzle-orm";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import type pg from "pg";
import { storeCall } from "./store-call.js";
import type { UserStore } from "../storage/user-store.js";
import type { SignonUser, SignonUserDetails } from "../user.js";
import { users } from "./schema.js";

/** Users in `signon_client.users` (apply `signonClientMigrations` first). */
export class PostgresUserStore implements UserStore {
  readonly #db: NodePgDatabase;

  constructor(pool: pg.Pool) {
    this.#db = drizzle({ client: pool });
  }

  async findByUid(uid: string): Promise<SignonUser | null> {
    return storeCall(async () => {
      const [row] = await this.#db.select().from(users).where(eq(users.uid, uid));
      return row ? toUser(row) : null;
    });
  }

  async upsert(details: SignonUserDetails, options: { remotelySignedOut?: boolean } = {}): Promise<SignonUser> {
    return storeCall(async () => {
      const values = {
        uid: details.uid,
        name: details.name,
        email: details.email,
        permissions: details.permissions,
        organisationSlug: details.organisationSlug,
        organisationContentId: details.organisationContentId,
        disabled: details.disabled,
        remotelySignedOut: options.remotelySignedOut ?? false,
      };
      const [row] = await this.#db
        .insert(users)
        .values(values)
        .onConflictDoUpdate({
          target: users.uid,
          set: {
            name: values.name,
            email: values.email,
            permissions: values.permissions,
            organisationSlug: values.organisationSlug,
            organisationContentId: values.organisationContentId,
            disabled: values.disabled,
            updatedAt: sql`now()`,
            ...(options.remotelySignedOut === undefined ? {} : { remotelySignedOut: options.remotelySignedOut }),
          },
        })
        .returning();
      if (!row) throw new Error("upsert returned no row");
      return toUser(row);
    });
  }

  async markRemotelySignedOut(uid: string): Promise<boolean> {
    return storeCall(async () => {
      const rows = await this.#db
        .update(users)
        .set({ remotelySignedOut: true, updatedAt: sql`now()` })
        .where(eq(users.uid, uid))
        .returning({ uid: users.uid });
      return rows.length > 0;
    });
  }
}

function toUser(row: typeof users.$inferSelect): SignonUser {
  return {
    uid: row.uid,
    name: row.name,
    email: row.email,
    permissions: row.permissions,
    organisationSlug: row.organisationSlug,
    organisationContentId: row.organisationContentId,
    disabled: row.disabled,
    remotelySignedOut: row.remotelySignedOut,
  };
}
