import { boolean, index, pgSchema, text, timestamp } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";

/** The application's own schema for what the Sign-on client stores. */
export const signonClientSchema = pgSchema("signon_client");

const at = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/** Users as Sign-on last described them (sign-in, refresh, `PUT /users/{uid}`). */
export const users = signonClientSchema.table("users", {
  uid: text("uid").primaryKey(),
  name: text("name").notNull(),
  email: text("email").notNull(),
  permissions: text("permissions")
    .array()
    .notNull()
    .default(sql`'{}'::text[]`),
  organisationSlug: text("organisation_slug"),
  organisationContentId: text("organisation_content_id"),
  disabled: boolean("disabled").notNull().default(false),
  remotelySignedOut: boolean("remotely_signed_out").notNull().default(false),
  updatedAt: at("updated_at").notNull().defaultNow(),
});

/** Browser sessions, keyed by the SHA-256 of the cookie's session id. */
export const sessions = signonClientSchema.table(
  "sessions",
  {
    idDigest: text("id_digest").primaryKey(),
    uid: text("uid"),
    signInState: text("sign_in_state"),
    signInCodeVerifier: text("sign_in_code_verifier"),
    signInReturnTo: text("sign_in_return_to"),
    accessToken: text("access_token"),
    refreshToken: text("refresh_token"),
    accessTokenExpiresAt: at("access_token_expires_at"),
    refreshAt: at("refresh_at"),
    refreshClaimedUntil: at("refresh_claimed_until"),
    createdAt: at("created_at").notNull(),
    expiresAt: at("expires_at").notNull(),
  },
  (table) => [index("sessions_uid_idx").on(table.uid), index("sessions_expires_at_idx").on(table.expiresAt)],
);
