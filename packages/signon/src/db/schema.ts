import { sql } from "drizzle-orm";
import {
  type AnyPgColumn,
  bigint,
  bigserial,
  boolean,
  check,
  index,
  inet,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

/** Every Sign-on table lives in the `signon` PostgreSQL schema. */
export const signon = pgSchema("signon");

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull();

/** Organisations form a tree through `parentId` (no cycles: checked before every change). */
export const organisations = signon.table(
  "organisations",
  {
    id: uuid("id").primaryKey(),
    slug: text("slug").notNull().unique(),
    name: text("name").notNull(),
    contentId: uuid("content_id").notNull().unique(),
    /** Every person of the organisation must use 2-step verification (set by superadmins). */
    twoStepRequired: boolean("two_step_required").notNull().default(false),
    /** The organisation above this one; super organisation admins of an organisation manage every one below it. */
    parentId: uuid("parent_id").references((): AnyPgColumn => organisations.id),
    /** A closed organisation is offered for nothing new (no new members); its people stay. */
    closed: boolean("closed").notNull().default(false),
    /**
     * How many users (people and API users) have this organisation, kept exact by triggers on `users` in the
     * statement that changes them (migration 0020), so no page counts them.
     */
    memberCount: integer("member_count").notNull().default(0),
    createdAt: createdAt(),
  },
  (table) => [index("organisations_parent_idx").on(table.parentId), check("organisations_not_own_parent_check", sql`${table.parentId} <> ${table.id}`)],
);

/** People and API users (S17, S18). E-mail is unique regardless of case. */
export const users = signon.table(
  "users",
  {
    uid: uuid("uid").primaryKey(),
    name: text("name").notNull(),
    email: text("email").notNull(),
    role: text("role").notNull().default("normal"),
    isApiUser: boolean("is_api_user").notNull().default(false),
    organisationId: uuid("organisation_id").references(() => organisations.id),
    passwordHash: text("password_hash"),
    suspendedAt: timestamp("suspended_at", { withTimezone: true }),
    suspensionReason: text("suspension_reason"),
    /** When the account locked for everyone after too many failed sign-ins across source addresses (S15); the lock lasts an hour. */
    lockedAt: timestamp("locked_at", { withTimezone: true }),
    /** The last completed sign-in; the inactivity job suspends people idle for too long. */
    lastSignedInAt: timestamp("last_signed_in_at", { withTimezone: true }),
    /** The authenticator-app secret, encrypted with the service's secret key (AES-256-GCM), while 2-step verification is on or being set up. */
    otpSecretEncrypted: text("otp_secret_encrypted"),
    /** When 2-step verification was confirmed with a first code; `null` while it is off. */
    otpEnabledAt: timestamp("otp_enabled_at", { withTimezone: true }),
    /** The last time step of an accepted code, so a code works once. */
    lastOtpStep: bigint("last_otp_step", { mode: "number" }),
    passwordChangedAt: timestamp("password_changed_at", { withTimezone: true }),
    /** This person must use 2-step verification, whatever their role and organisation (set by administrators). */
    twoStepRequired: boolean("two_step_required").notNull().default(false),
    /** Why a superadmin exempted this person from their organisation's and their own 2-step requirement, while an exemption is recorded. */
    twoStepExemptionReason: text("two_step_exemption_reason"),
    /** When that exemption ends; from then on it no longer applies. */
    twoStepExemptUntil: timestamp("two_step_exempt_until", { withTimezone: true }),
    /** When an administrator last lifted a suspension; the inactivity job leaves the person alone for a grace period after it. */
    unsuspendedAt: timestamp("unsuspended_at", { withTimezone: true }),
    /** The stored password no longer signs in: an administrator lifted a suspension and asked for a new one (set through a mailed link). */
    newPasswordRequired: boolean("new_password_required").notNull().default(false),
    /** The inactivity suspension date the last reminder mail was about; a sign-in moves that date, so a new period starts. */
    inactivityReminderFor: timestamp("inactivity_reminder_for", { withTimezone: true }),
    /** How many days before `inactivity_reminder_for` that reminder was sent (14, 7, 3 or 1). */
    inactivityReminderDays: integer("inactivity_reminder_days"),
    /** When the latest invitation was sent; never-used invitations are deleted a while after it. */
    invitationSentAt: timestamp("invitation_sent_at", { withTimezone: true }),
    /** API users only: a token about to expire is replaced by a new one, shown once to an administrator. */
    tokenAutoRenewal: boolean("token_auto_renewal").notNull().default(false),
    /** How many passkeys the person has registered (kept with `passkeys` in the same transaction): any counts as a second factor. */
    passkeyCount: integer("passkey_count").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (table) => [
    uniqueIndex("users_email_lower_key").on(sql`lower(${table.email})`),
    // The users list (people, not API users) reads in the order lower(name), uid, through one of these for each filter.
    index("users_list_name_idx").on(sql`lower(${table.name})`, table.uid).where(sql`not ${table.isApiUser}`),
    index("users_list_role_idx").on(table.role, sql`lower(${table.name})`, table.uid).where(sql`not ${table.isApiUser}`),
    index("users_list_organisation_idx").on(table.organisationId, sql`lower(${table.name})`, table.uid).where(sql`not ${table.isApiUser}`),
    // People without an organisation, by name. Its predicate leaves `not is_api_user` out on purpose: PostgreSQL
    // combines two partial indexes (a BitmapAnd) only when their predicates share no condition, and this one is
    // read beside a status's (no organisation and suspended: 2,000 people found from two small indexes, where the
    // status's index alone made 40,000 heap reads at 1M people).
    index("users_without_organisation_idx").on(sql`lower(${table.name})`, table.uid).where(sql`${table.organisationId} is null`),
    index("users_list_suspended_idx").on(sql`lower(${table.name})`, table.uid).where(sql`not ${table.isApiUser} and ${table.suspendedAt} is not null`),
    index("users_list_invited_idx").on(sql`lower(${table.name})`, table.uid).where(sql`not ${table.isApiUser} and ${table.passwordHash} is null`),
    index("users_list_two_step_on_idx").on(sql`lower(${table.name})`, table.uid).where(sql`not ${table.isApiUser} and ${table.otpEnabledAt} is not null`),
    index("users_api_name_idx").on(sql`lower(${table.name})`, table.uid).where(sql`${table.isApiUser}`),
    index("users_locked_at_idx").on(table.lockedAt).where(sql`${table.lockedAt} is not null`),
    // Search by a fragment of the name or e-mail address (`ilike '%…%'`): trigram indexes (the pg_trgm extension).
    index("users_name_trgm_idx").using("gin", table.name.op("gin_trgm_ops")),
    index("users_email_trgm_idx").using("gin", table.email.op("gin_trgm_ops")),
    // A search of one or two characters, which no trigram narrows: every character and pair of characters of the
    // name and of the e-mail address, lower-cased (`signon.short_grams`, migration 0019; built by 0022).
    index("users_short_grams_idx").using("gin", sql`signon.short_grams(${table.name}, ${table.email})`),
    index("users_two_step_exempt_until_idx").on(table.twoStepExemptUntil).where(sql`${table.twoStepExemptUntil} is not null`),
    check("users_role_check", sql`${table.role} in ('superadmin', 'admin', 'super_organisation_admin', 'organisation_admin', 'normal')`),
    check("users_suspension_reason_check", sql`(${table.suspendedAt} is null) = (${table.suspensionReason} is null)`),
    check("users_two_step_exemption_check", sql`(${table.twoStepExemptionReason} is null) = (${table.twoStepExemptUntil} is null)`),
  ],
);

/** Client applications (S5, S8, S12). `signin` is always among the supported permissions. */
export const applications = signon.table(
  "applications",
  {
    id: uuid("id").primaryKey(),
    name: text("name").notNull().unique(),
    clientId: text("client_id").notNull().unique(),
    clientSecretHash: text("client_secret_hash").notNull(),
    redirectUris: text("redirect_uris").array().notNull(),
    homeUri: text("home_uri"),
    pushBaseUrl: text("push_base_url"),
    supportedPermissions: text("supported_permissions").array().notNull(),
    /** Permissions an organisation admin may grant and revoke (a subset of the supported ones). */
    delegatablePermissions: text("delegatable_permissions").array().notNull().default(sql`'{}'::text[]`),
    requirePkce: boolean("require_pkce").notNull().default(false),
    retired: boolean("retired").notNull().default(false),
    /** Used by API users only: left off people's dashboards and permission grids, and nobody signs in to it through `/oauth/authorize`. */
    apiOnly: boolean("api_only").notNull().default(false),
    /** Off: no pushes are queued for it. */
    pushEnabled: boolean("push_enabled").notNull().default(true),
    /** Permissions granted to every new person when their account is created or their invitation accepted. */
    defaultPermissions: text("default_permissions").array().notNull().default(sql`'{}'::text[]`),
    /** Permissions the web interface does not offer in permission grids (the CLI still grants them). */
    permissionsNotGrantableInUi: text("permissions_not_grantable_in_ui").array().notNull().default(sql`'{}'::text[]`),
    /** OpenID Connect scopes the application may ask for (`openid`, `profile`, `email`); empty: it is not an OpenID Connect client. */
    oidcScopes: text("oidc_scopes").array().notNull().default(sql`'{}'::text[]`),
    /** The JWS algorithm of its ID tokens (`ES256` or `RS256`). */
    idTokenSignedResponseAlg: text("id_token_signed_response_alg").notNull().default("ES256"),
    /** Where RP-initiated logout may send the browser back to (exact match). */
    postLogoutRedirectUris: text("post_logout_redirect_uris").array().notNull().default(sql`'{}'::text[]`),
    /** Where back-channel logout tokens are posted; `null`: none. */
    backchannelLogoutUri: text("backchannel_logout_uri"),
    createdAt: createdAt(),
  },
  (table) => [
    check("applications_id_token_alg_check", sql`${table.idTokenSignedResponseAlg} in ('ES256', 'RS256')`),
    check("applications_signin_supported_check", sql`'signin' = any(${table.supportedPermissions})`),
  ],
);

/** One row per permission a user holds on an application. */
export const userPermissions = signon.table(
  "user_permissions",
  {
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    applicationId: uuid("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    permission: text("permission").notNull(),
    createdAt: createdAt(),
  },
  (table) => [
    primaryKey({ columns: [table.userUid, table.applicationId, table.permission] }),
    // Who holds a permission: the users list's permission filter.
    index("user_permissions_application_idx").on(table.applicationId, table.permission, table.userUid),
  ],
);

/**
 * One authorization of an application by a user: from an authorization code
 * (S6) or issued by an operator (S17). Every token belongs to one grant, so a
 * replayed code or refresh token can revoke the whole family.
 */
export const grants = signon.table(
  "grants",
  {
    id: uuid("id").primaryKey(),
    kind: text("kind").notNull(),
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    applicationId: uuid("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").unique(),
    redirectUri: text("redirect_uri"),
    codeChallenge: text("code_challenge"),
    codeExpiresAt: timestamp("code_expires_at", { withTimezone: true }),
    codeUsedAt: timestamp("code_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    /** OpenID Connect: the granted scopes when the request asked for `openid`, else `null` (a draft-22 grant). */
    scope: text("scope"),
    /** OpenID Connect: the authorization request's `nonce`, repeated in the ID token. */
    nonce: text("nonce"),
    /** OpenID Connect: when the user authenticated (the session's sign-in), and how (`amr`). */
    authTime: timestamp("auth_time", { withTimezone: true }),
    amr: text("amr").array(),
    createdAt: createdAt(),
  },
  (table) => [
    check("grants_kind_check", sql`${table.kind} in ('authorization_code', 'issued')`),
    index("grants_user_idx").on(table.userUid),
  ],
);

/** Access tokens, keyed by the SHA-256 digest of the token (S5). */
export const accessTokens = signon.table(
  "access_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    grantId: uuid("grant_id")
      .notNull()
      .references(() => grants.id, { onDelete: "cascade" }),
    // The grant's user and application, copied for lookups. No foreign keys of their own: the grant's
    // reference them and cascade, and checking them locked the application's row on every token issued.
    userUid: uuid("user_uid").notNull(),
    applicationId: uuid("application_id").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (table) => [index("access_tokens_grant_idx").on(table.grantId)],
);

/** Refresh tokens, keyed by the SHA-256 digest of the token (S5). */
export const refreshTokens = signon.table(
  "refresh_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    grantId: uuid("grant_id")
      .notNull()
      .references(() => grants.id, { onDelete: "cascade" }),
    rotatedAt: timestamp("rotated_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (table) => [index("refresh_tokens_grant_idx").on(table.grantId)],
);

/** Browser sessions of the service itself; the id is stored only as its SHA-256 digest. */
export const sessions = signon.table(
  "sessions",
  {
    idHash: text("id_hash").primaryKey(),
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    createdAt: createdAt(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }).notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    ip: inet("ip"),
    userAgent: text("user_agent"),
    /** Password checked, 2-step code not yet: the session signs nobody in until the code is entered. */
    awaitingSecondFactor: boolean("awaiting_second_factor").notNull().default(false),
    /**
     * A message shown once on the next page (flash), then cleared; with a
     * secret made by the post before (sealed, `web/one-time-secret.ts`) for
     * the one page that shows it.
     */
    flash: jsonb("flash").$type<{ kind: "success" | "error"; text: string; secret?: { for: string; sealed: string } }>(),
    /**
     * How the person signed in, as RFC 8176 `amr` values in the order used:
     * `pwd` (password), `otp` (authenticator app code), `hwk` (passkey).
     */
    authenticationMethods: text("authentication_methods").array().notNull().default(sql`'{}'::text[]`),
    /** Signed in through an organisation's provider: which, and the provider's session id (`sid`, SAML `SessionIndex`), for its logout. */
    upstreamProviderId: uuid("upstream_provider_id"),
    upstreamSessionId: text("upstream_session_id"),
  },
  (table) => [index("sessions_user_idx").on(table.userUid)],
);

/** Previous password hashes, so a new password is not one of the last ones used. */
export const passwordHistory = signon.table(
  "password_history",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    passwordHash: text("password_hash").notNull(),
    createdAt: createdAt(),
  },
  (table) => [index("password_history_user_idx").on(table.userUid, table.createdAt)],
);

/**
 * Single-use links sent by e-mail: an invitation (set a first password), a
 * password reset, or the unlock link sent when an account locks (S15). Only
 * the SHA-256 digest of the token is stored.
 */
export const accountLinks = signon.table(
  "account_links",
  {
    tokenHash: text("token_hash").primaryKey(),
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    purpose: text("purpose").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (table) => [
    index("account_links_user_idx").on(table.userUid),
    check("account_links_purpose_check", sql`${table.purpose} in ('invitation', 'password_reset', 'unlock')`),
  ],
);

/**
 * E-mail address changes waiting for the new address to confirm them: a
 * single-use link (digest of its token only) valid for 24 hours. At most one
 * pending change per user; a confirmed row stays, so a second click is told
 * "already used".
 */
export const emailChanges = signon.table(
  "email_changes",
  {
    tokenHash: text("token_hash").primaryKey(),
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    newEmail: text("new_email").notNull(),
    requestedByUid: uuid("requested_by_uid").references(() => users.uid, { onDelete: "set null" }),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    confirmedAt: timestamp("confirmed_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (table) => [uniqueIndex("email_changes_pending_user_key").on(table.userUid).where(sql`${table.confirmedAt} is null`)],
);

/** Browsers that may skip the 2-step code for a while ("remember this browser"); digest of the cookie value only. */
export const rememberedBrowsers = signon.table(
  "remembered_browsers",
  {
    tokenHash: text("token_hash").primaryKey(),
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: createdAt(),
  },
  (table) => [index("remembered_browsers_user_idx").on(table.userUid)],
);

/** Passkeys (WebAuthn public key credentials), each belonging to one person. */
export const passkeys = signon.table(
  "passkeys",
  {
    id: uuid("id").primaryKey(),
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    /** The credential id as base64url, as the browser reports it. */
    credentialId: text("credential_id").notNull().unique(),
    /** The COSE public key, base64url. */
    publicKey: text("public_key").notNull(),
    /** The authenticator's signature counter last seen; a response must carry a higher one (0 stays 0 for authenticators without one). */
    signCount: bigint("sign_count", { mode: "number" }).notNull(),
    transports: text("transports").array().notNull().default(sql`'{}'::text[]`),
    name: text("name").notNull(),
    /** `singleDevice` or `multiDevice` (synced), as the authenticator said at registration. */
    deviceType: text("device_type").notNull(),
    backedUp: boolean("backed_up").notNull(),
    createdAt: createdAt(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
  },
  (table) => [index("passkeys_user_idx").on(table.userUid)],
);

/** WebAuthn challenges handed out and not yet used: each is taken (deleted) by the one response that answers it. */
export const passkeyChallenges = signon.table(
  "passkey_challenges",
  {
    /** The challenge as base64url. */
    challenge: text("challenge").primaryKey(),
    /** `registration`, `second_factor` or `passwordless`. */
    purpose: text("purpose").notNull(),
    /** The person it was made for (registration and second factor); none for a passwordless sign-in. */
    userUid: uuid("user_uid").references(() => users.uid, { onDelete: "cascade" }),
    /**
     * Digest of what binds it to the one browser it was handed to: the
     * session id (registration, second factor), or the value of the
     * passwordless sign-in cookie (passwordless). A response is only taken
     * with the same value.
     */
    sessionHash: text("session_hash"),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (table) => [
    index("passkey_challenges_expires_idx").on(table.expiresAt),
    check("passkey_challenges_purpose_check", sql`${table.purpose} in ('registration', 'second_factor', 'passwordless')`),
  ],
);

/** Mails kept by the development mailbox (`/dev/mail`) when no SMTP server is configured. */
export const devMails = signon.table("dev_mails", {
  id: bigserial("id", { mode: "number" }).primaryKey(),
  recipient: text("recipient").notNull(),
  subject: text("subject").notNull(),
  textBody: text("text_body").notNull(),
  createdAt: createdAt(),
});

/** Small named facts about this installation (for example, that the first-start set-up ran). */
export const settings = signon.table("settings", {
  key: text("key").primaryKey(),
  value: jsonb("value").$type<unknown>().notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
});

/** Fixed-window failure counters for brute-force limits (S15), shared by all instances. */
export const failureCounters = signon.table("failure_counters", {
  key: text("key").primaryKey(),
  failures: integer("failures").notNull(),
  windowEndsAt: timestamp("window_ends_at", { withTimezone: true }).notNull(),
});

/**
 * Failed sign-ins per submitted e-mail address (normalised, whether or not an
 * account has it), source address and kind (S15): `password` or
 * `two_step_code`. Counted in a fixed window of an hour from the first
 * failure; at the limit the source is refused for that address until
 * `blocked_until`. Administrators see these rows as the causes of a lock.
 */
export const signInFailures = signon.table(
  "sign_in_failures",
  {
    email: text("email").notNull(),
    source: text("source").notNull(),
    kind: text("kind").notNull(),
    failures: integer("failures").notNull(),
    windowEndsAt: timestamp("window_ends_at", { withTimezone: true }).notNull(),
    blockedUntil: timestamp("blocked_until", { withTimezone: true }),
    lastFailedAt: timestamp("last_failed_at", { withTimezone: true }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.email, table.source, table.kind] }),
    check("sign_in_failures_kind_check", sql`${table.kind} in ('password', 'two_step_code')`),
  ],
);

/** Every security-relevant action: who, what, when, from where, on which application. */
export const auditEvents = signon.table(
  "audit_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    occurredAt: timestamp("occurred_at", { withTimezone: true }).notNull(),
    action: text("action").notNull(),
    actorUid: uuid("actor_uid"),
    subjectUid: uuid("subject_uid"),
    applicationId: uuid("application_id"),
    ip: inet("ip"),
    userAgent: text("user_agent"),
    details: jsonb("details").$type<Record<string, unknown>>().notNull().default({}),
  },
  (table) => [
    index("audit_events_subject_idx").on(table.subjectUid, table.occurredAt),
    // Most events have no actor (token issues, pushes): they are kept out of the actor index.
    index("audit_events_actor_idx").on(table.actorUid, table.occurredAt).where(sql`${table.actorUid} is not null`),
    index("audit_events_occurred_idx").on(table.occurredAt),
    index("audit_events_sign_in_idx").on(table.applicationId, table.occurredAt).where(sql`${table.action} = 'authorization_code_issued'`),
    // An application's event log (`/applications/:id/events`): the changes to it, without its many sign-ins. The
    // list is `applicationChangeActions` (repositories/application-events.ts); a query names the same actions.
    index("audit_events_application_change_idx")
      .on(table.applicationId, table.occurredAt)
      .where(
        sql`${table.action} in ('application_created', 'application_updated', 'application_secret_rotated', 'application_retired', 'application_unretired', 'application_uris_rewritten', 'credentials_exported', 'client_authentication_flood')`,
      ),
    // An organisation's identity provider page: its connection's changes, refused sign-ins and logouts. The list is
    // `identityProviderEventActions` (repositories/identity-provider-events.ts); a query names the same actions.
    index("audit_events_identity_provider_idx")
      .on(sql`(${table.details}->>'organisation_id')`, table.occurredAt)
      .where(
        sql`${table.action} in ('identity_provider_connected', 'identity_provider_changed', 'identity_provider_disconnected', 'upstream_sign_in_refused', 'upstream_logout')`,
      ),
  ],
);

/**
 * When an application last had a user's current state: it fetched `/user.json`
 * with their token, or a push about them was delivered. Written at most about
 * once a minute per pair, so `/user.json` stays a read.
 */
export const userApplicationSyncs = signon.table(
  "user_application_syncs",
  {
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    applicationId: uuid("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    lastSyncedAt: timestamp("last_synced_at", { withTimezone: true }).notNull(),
    /** How: `user_json` or `push`. */
    lastSyncedBy: text("last_synced_by").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.userUid, table.applicationId] }),
    check("user_application_syncs_by_check", sql`${table.lastSyncedBy} in ('user_json', 'push')`),
  ],
);

/**
 * An application's figures of a calendar month (UTC) that has ended: different people who signed in and sign-ins,
 * counted once from the audit events the first time the usage page asks and kept, as a month that has ended gets
 * no more sign-ins. The month in progress is counted on each view.
 */
export const applicationUsageMonths = signon.table(
  "application_usage_months",
  {
    applicationId: uuid("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    /** `YYYY-MM`. */
    month: text("month").notNull(),
    users: integer("users").notNull(),
    signIns: integer("sign_ins").notNull(),
  },
  (table) => [primaryKey({ columns: [table.applicationId, table.month] })],
);

/**
 * Tokens issued automatically to replace an API user's token before it
 * expires. The new token is kept sealed (AES-256-GCM under the secret key)
 * only until an administrator has seen it and acknowledged it; then only the
 * row remains, so the old grant is not renewed twice.
 */
export const renewedTokens = signon.table("renewed_tokens", {
  grantId: uuid("grant_id")
    .primaryKey()
    .references(() => grants.id, { onDelete: "cascade" }),
  replacesGrantId: uuid("replaces_grant_id")
    .notNull()
    .unique()
    .references(() => grants.id, { onDelete: "cascade" }),
  userUid: uuid("user_uid")
    .notNull()
    .references(() => users.uid, { onDelete: "cascade" }),
  applicationId: uuid("application_id")
    .notNull()
    .references(() => applications.id, { onDelete: "cascade" }),
  tokenSealed: text("token_sealed"),
  acknowledgedAt: timestamp("acknowledged_at", { withTimezone: true }),
  acknowledgedBy: uuid("acknowledged_by"),
  createdAt: createdAt(),
});

/**
 * Orders every push queued, across rows: a newer change of a (user,
 * application) always has a higher number than an older one (S14).
 */
export const pushSequence = signon.sequence("push_sequence");

/**
 * The push outbox (S13, S14): one row per (user, application, kind), written
 * in the transaction of the change that causes it. A newer change of the same
 * kind overwrites the row (coalescing) with a higher `seq`; the PUT body is
 * built from the current state when it is sent, so the latest state wins. A
 * row is sent only when no pending row of the same (user, application) has a
 * lower `seq` (order), and only by the worker holding its lease.
 */
export const pushDeliveries = signon.table(
  "push_deliveries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    applicationId: uuid("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    status: text("status").notNull(),
    attempts: integer("attempts").notNull().default(0),
    pendingSince: timestamp("pending_since", { withTimezone: true }).notNull(),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull(),
    leaseToken: uuid("lease_token"),
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    lastAttemptAt: timestamp("last_attempt_at", { withTimezone: true }),
    lastError: text("last_error"),
    deliveredAt: timestamp("delivered_at", { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (table) => [
    uniqueIndex("push_deliveries_user_application_kind_key").on(table.userUid, table.applicationId, table.kind),
    index("push_deliveries_due_idx").on(table.nextAttemptAt, table.seq).where(sql`${table.status} = 'pending'`),
    // An application's pushes as its delivery page lists them: failed, pending, delivered; newest first within each (keyset).
    index("push_deliveries_application_list_idx").on(
      table.applicationId,
      sql`(case ${table.status} when 'failed' then 0 when 'pending' then 1 else 2 end)`,
      table.updatedAt.desc().nullsFirst(),
      table.id.desc().nullsFirst(),
    ),
    check("push_deliveries_kind_check", sql`${table.kind} in ('update', 'reauth', 'logout')`),
    check("push_deliveries_status_check", sql`${table.status} in ('pending', 'delivered', 'failed')`),
  ],
);

/**
 * Permissions chosen on an invitation, granted when the invited person accepts
 * it (sets their password); the rows are then deleted. `invited_by_uid` is the
 * administrator who chose them (`null`: the operator's command).
 */
export const invitationPermissions = signon.table(
  "invitation_permissions",
  {
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    applicationId: uuid("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    permission: text("permission").notNull(),
    invitedByUid: uuid("invited_by_uid").references(() => users.uid, { onDelete: "set null" }),
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ columns: [table.userUid, table.applicationId, table.permission] })],
);

/**
 * A batch of invitations from an uploaded CSV file: the role, organisation
 * (for rows that name none) and permissions chosen once for every row, and
 * who asked (`null`: the operator's command). `finished_at` is set when no row
 * is pending any more.
 */
export const invitationBatches = signon.table("invitation_batches", {
  id: uuid("id").primaryKey(),
  createdByUid: uuid("created_by_uid").references(() => users.uid, { onDelete: "set null" }),
  role: text("role").notNull(),
  organisationId: uuid("organisation_id").references(() => organisations.id, { onDelete: "set null" }),
  /** `<application id>:<permission>` values, as the permission grid posts them. */
  permissions: text("permissions").array().notNull().default(sql`'{}'::text[]`),
  createdAt: createdAt(),
  finishedAt: timestamp("finished_at", { withTimezone: true }),
});

/**
 * One row of a batch's file and what became of it: `pending` until the job
 * reaches it, then `invited`, `exists` (an account has the address) or
 * `invalid` (with the reason). The job claims pending rows one at a time, so
 * a restart resumes where it stopped.
 */
export const invitationBatchRows = signon.table(
  "invitation_batch_rows",
  {
    batchId: uuid("batch_id")
      .notNull()
      .references(() => invitationBatches.id, { onDelete: "cascade" }),
    /** The row's line in the file (1: the first line). */
    line: integer("line").notNull(),
    name: text("name").notNull(),
    email: text("email").notNull(),
    /** The organisation as the file names it (slug or name), or `null`. */
    organisation: text("organisation"),
    outcome: text("outcome").notNull().default("pending"),
    reason: text("reason"),
    userUid: uuid("user_uid").references(() => users.uid, { onDelete: "set null" }),
    processedAt: timestamp("processed_at", { withTimezone: true }),
  },
  (table) => [
    primaryKey({ columns: [table.batchId, table.line] }),
    index("invitation_batch_rows_pending_idx").on(table.batchId, table.line).where(sql`${table.outcome} = 'pending'`),
    check("invitation_batch_rows_outcome_check", sql`${table.outcome} in ('pending', 'invited', 'exists', 'invalid')`),
  ],
);

/**
 * OpenID Connect signing keys. The private key is sealed under the secret key
 * (`security/secret-box.ts`); the public one is published at `jwks_uri` from
 * its creation until `publishUntil` (set when the key is retired: every token
 * it signed has expired by then). One live key (`retiredAt` null) per
 * algorithm; a new key signs from `activeFrom`, the one it replaces until then.
 */
export const signingKeys = signon.table(
  "signing_keys",
  {
    kid: text("kid").primaryKey(),
    alg: text("alg").notNull(),
    publicJwk: jsonb("public_jwk").$type<Record<string, unknown>>().notNull(),
    sealedPrivateJwk: text("sealed_private_jwk").notNull(),
    createdAt: createdAt(),
    /** Published from `createdAt`, used for signing from `activeFrom`: clients have had time to see it at `jwks_uri`. */
    activeFrom: timestamp("active_from", { withTimezone: true }).notNull().default(sql`now()`),
    retiredAt: timestamp("retired_at", { withTimezone: true }),
    publishUntil: timestamp("publish_until", { withTimezone: true }),
  },
  (table) => [
    check("signing_keys_alg_check", sql`${table.alg} in ('ES256', 'RS256')`),
    uniqueIndex("signing_keys_live_alg_key").on(table.alg).where(sql`${table.retiredAt} is null`),
  ],
);

/**
 * What `signon import-from-signon` brought over, one row per Signon row, by
 * Signon's key (`user:12`, `permission:12:34`, `token:56`…): a fingerprint
 * of what the row brought and what it became here (a uid, an id, a token's
 * digest). A later run applies only the rows whose fingerprint changed, and
 * takes back what Signon no longer has.
 */
export const signonImportLedger = signon.table("signon_import_ledger", {
  key: text("key").primaryKey(),
  fingerprint: text("fingerprint").notNull(),
  target: text("target").notNull(),
  importedAt: timestamp("imported_at", { withTimezone: true }).notNull(),
});

/**
 * An organisation's own identity provider (OpenID Connect or SAML 2.0): people whose address is at one of `domains`
 * sign in there instead of with a Sign-on password. One per organisation; a domain belongs to one provider.
 */
export const identityProviders = signon.table(
  "identity_providers",
  {
    id: uuid("id").primaryKey(),
    organisationId: uuid("organisation_id")
      .notNull()
      .unique()
      .references(() => organisations.id, { onDelete: "cascade" }),
    protocol: text("protocol").notNull(),
    /** The e-mail domains it answers for (lower case); a domain belongs to one provider. */
    domains: text("domains").array().notNull(),
    /** OpenID Connect: the issuer (its discovery document is `<issuer>/.well-known/openid-configuration`), and Sign-on's client there. */
    issuer: text("issuer"),
    clientId: text("client_id"),
    /** `client_secret_basic`, `client_secret_post` or `private_key_jwt`. */
    clientAuthentication: text("client_authentication"),
    /** The client secret, or the private key (PKCS #8 PEM) of `private_key_jwt`, sealed with the service's secret key. */
    clientCredentialSealed: text("client_credential_sealed"),
    /** `private_key_jwt`: the key's id (`kid`) and its certificate (PEM), whose thumbprints (`x5t`, `x5t#S256`) some providers match the key by. */
    clientKeyId: text("client_key_id"),
    clientCertificate: text("client_certificate"),
    scopes: text("scopes").notNull().default("openid email profile"),
    /** SAML: the IdP's entity id, where its single sign-on and single logout services are, and the certificates it signs with (PEM). */
    samlEntityId: text("saml_entity_id"),
    samlSignOnUrl: text("saml_sign_on_url"),
    samlLogoutUrl: text("saml_logout_url"),
    samlCertificates: text("saml_certificates").array(),
    /** Addresses that may still sign in with a Sign-on password (break-glass accounts); nobody by default. */
    passwordAddresses: text("password_addresses").array().notNull().default(sql`'{}'::text[]`),
    /** Whether a person the provider vouches for and Sign-on does not know gets an account at first sign-in. */
    createAccounts: boolean("create_accounts").notNull().default(false),
    /** `acr` (or SAML `AuthnContextClassRef`) values that show a second factor, besides an `amr` that does. */
    secondFactorContexts: text("second_factor_contexts").array().notNull().default(sql`'{}'::text[]`),
    /** People not seen through the provider for this many days are suspended by the inactivity job; `null`: never. */
    suspendUnseenDays: integer("suspend_unseen_days"),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (table) => [check("identity_providers_protocol_check", sql`${table.protocol} in ('oidc', 'saml')`)],
);

/** Who a person is at their organisation's provider: its stable subject (`sub`, a persistent SAML `NameID`), linked once. */
export const upstreamIdentities = signon.table(
  "upstream_identities",
  {
    providerId: uuid("provider_id")
      .notNull()
      .references(() => identityProviders.id, { onDelete: "cascade" }),
    subject: text("subject").notNull(),
    userUid: uuid("user_uid")
      .notNull()
      .references(() => users.uid, { onDelete: "cascade" }),
    linkedAt: timestamp("linked_at", { withTimezone: true }).notNull(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.providerId, table.subject] }), uniqueIndex("upstream_identities_user_idx").on(table.userUid, table.providerId)],
);

/**
 * A sign-in sent to a provider and not yet back: found by the digest of its `state` (SAML: its `RelayState`), which the
 * browser's cookie also holds, and deleted when it comes back, so that a replayed answer finds nothing. The nonce and
 * PKCE verifier (SAML: `nonce` is the request's id) check the answer.
 */
export const upstreamSignIns = signon.table(
  "upstream_sign_ins",
  {
    stateHash: text("state_hash").primaryKey(),
    providerId: uuid("provider_id")
      .notNull()
      .references(() => identityProviders.id, { onDelete: "cascade" }),
    nonce: text("nonce").notNull(),
    codeVerifier: text("code_verifier"),
    /** The address typed on the sign-in page, for the event of a refusal. */
    email: text("email").notNull(),
    returnTo: text("return_to").notNull(),
    /**
     * SAML: the person a checked answer vouched for, waiting for the browser to come back with its cookie (the answer
     * is a post from the provider's site, which carries no SameSite=Lax cookie).
     */
    answer: jsonb("answer"),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (table) => [index("upstream_sign_ins_expiry_idx").on(table.expiresAt)],
);

/** Logout tokens and SAML messages already acted on (their `jti` or id), kept until they would have expired: a replay finds its row. */
export const upstreamMessagesSeen = signon.table(
  "upstream_messages_seen",
  {
    providerId: uuid("provider_id")
      .notNull()
      .references(() => identityProviders.id, { onDelete: "cascade" }),
    messageId: text("message_id").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.providerId, table.messageId] }), index("upstream_messages_seen_expiry_idx").on(table.expiresAt)],
);
