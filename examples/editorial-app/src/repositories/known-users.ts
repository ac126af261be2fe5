import { asc } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import { signonClientTables } from "@tessera/signon-client/postgres";
import type pg from "pg";

/** A user as the admin page lists them. */
export interface KnownUser {
  uid: string;
  name: string;
  email: string;
  permissions: string[];
  disabled: boolean;
  remotelySignedOut: boolean;
}

/** Every user Sign-on has told this application about, by name. */
export async function listKnownUsers(pool: pg.Pool): Promise<KnownUser[]> {
  const { users } = signonClientTables;
  return drizzle({ client: pool })
    .select({
      uid: users.uid,
      name: users.name,
      email: users.email,
      permissions: users.permissions,
      disabled: users.disabled,
      remotelySignedOut: users.remotelySignedOut,
    })
    .from(users)
    .orderBy(asc(users.name), asc(users.uid));
}
