import mysql from "mysql2/promise";

/** What the import reads from a GOV.UK Signon database (MySQL), one array per table, ids as Signon numbers them. */
export interface SignonData {
  organisations: SignonOrganisation[];
  applications: SignonApplication[];
  supportedPermissions: SignonSupportedPermission[];
  users: SignonUser[];
  /** How many permissions Signon holds (they are read in batches: see SignonSnapshot.permissions). */
  permissionCount: number;
  /** Access tokens neither revoked nor expired at `readAt`. */
  tokens: SignonToken[];
  oldPasswords: SignonOldPassword[];
  readAt: Date;
}

export interface SignonOrganisation {
  id: number;
  slug: string;
  name: string;
  contentId: string;
  /** Ancestor ids, root first (`ancestry` "1/5/7"); empty for a top-level organisation. */
  ancestry: number[];
  closed: boolean;
  require2sv: boolean;
  createdAt: Date | null;
}

export interface SignonApplication {
  id: number;
  name: string;
  uid: string;
  secret: string;
  redirectUri: string;
  homeUri: string | null;
  description: string | null;
  supportsPushUpdates: boolean;
  retired: boolean;
  apiOnly: boolean;
  createdAt: Date | null;
}

export interface SignonSupportedPermission {
  id: number;
  applicationId: number;
  name: string;
  delegatable: boolean;
  grantableFromUi: boolean;
  isDefault: boolean;
}

export interface SignonUser {
  id: number;
  uid: string;
  name: string;
  email: string;
  encryptedPassword: string | null;
  passwordSalt: string | null;
  role: string;
  organisationId: number | null;
  apiUser: boolean;
  suspendedAt: Date | null;
  reasonForSuspension: string | null;
  unsuspendedAt: Date | null;
  lockedAt: Date | null;
  require2sv: boolean;
  reasonFor2svExemption: string | null;
  expiryDateFor2svExemption: Date | null;
  otpSecretKey: string | null;
  lastSignedInAt: Date | null;
  invitationSentAt: Date | null;
  invitationAcceptedAt: Date | null;
  passwordChangedAt: Date | null;
  createdAt: Date | null;
  updatedAt: Date | null;
}

export interface SignonUserPermission {
  userId: number;
  applicationId: number;
  supportedPermissionId: number;
  lastSyncedAt: Date | null;
}

export interface SignonToken {
  id: number;
  userId: number;
  applicationId: number;
  token: string;
  refreshToken: string | null;
  /** created_at + expires_in; null when expires_in is null (it never expires). */
  expiresAt: Date | null;
  createdAt: Date;
}

export interface SignonOldPassword {
  userId: number;
  encryptedPassword: string;
  passwordSalt: string | null;
  createdAt: Date | null;
}

/** A Signon database that cannot be read, said in one sentence. */
export class SignonSourceError extends Error {}

type Row = Record<string, unknown>;

const text = (value: unknown): string => (value === null || value === undefined ? "" : Buffer.isBuffer(value) ? value.toString("utf8") : String(value));
const optionalText = (value: unknown): string | null => (value === null || value === undefined ? null : text(value));
const flag = (value: unknown): boolean => value === 1 || value === true || value === "1";
const date = (value: unknown): Date | null => (value instanceof Date && !Number.isNaN(value.getTime()) ? value : null);
const id = (value: unknown): number => Number(value);
const optionalId = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/** A consistent view of a Signon database: its rows, and its permissions to read in batches, until `close`. */
export interface SignonSnapshot {
  data: SignonData;
  /** Signon's permissions, `batchSize` at a time, from the same snapshot (a million do not fit comfortably in memory at once). */
  permissions(batchSize?: number): AsyncGenerator<SignonUserPermission[]>;
  close(): Promise<void>;
}

/**
 * Reads everything the import needs from the Signon database at `url`
 * (`mysql://user:password@host:3306/signon_production`), in one read-only
 * transaction with a consistent snapshot, so that the tables agree with each
 * other even while Signon keeps running. Times are read as UTC, as Rails
 * writes them. Close the snapshot once its permissions are read.
 */
export async function openSignonSnapshot(url: string, now: Date): Promise<SignonSnapshot> {
  const connection = await connectToSignon(url);
  const close = () => connection.end().catch(() => undefined);
  try {
    await connection.query("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    await connection.query("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
    const columns = await tableColumns(connection);
    const need = (table: string, names: string[]) => {
      const have = columns.get(table);
      if (!have) throw new SignonSourceError(`The Signon database has no table ${table}: is this a Signon database?`);
      const missing = names.filter((name) => !have.has(name));
      if (missing.length > 0) throw new SignonSourceError(`The Signon database's ${table} has no ${missing.join(", ")}: this version of Signon is not one the import knows`);
      return have;
    };
    need("organisations", ["id", "slug", "name", "content_id", "ancestry", "closed", "require_2sv", "created_at"]);
    const applicationColumns = need("oauth_applications", ["id", "name", "uid", "secret", "redirect_uri", "home_uri", "supports_push_updates", "retired", "created_at"]);
    need("supported_permissions", ["id", "application_id", "name", "delegatable", "grantable_from_ui", "default"]);
    need("users", ["id", "uid", "name", "email", "encrypted_password", "password_salt", "role", "organisation_id", "api_user", "suspended_at", "reason_for_suspension", "locked_at", "require_2sv", "otp_secret_key"]);
    const userColumns = columns.get("users")!;
    need("user_application_permissions", ["user_id", "application_id", "supported_permission_id"]);
    need("oauth_access_tokens", ["id", "resource_owner_id", "application_id", "token", "refresh_token", "expires_in", "revoked_at", "created_at"]);
    const optional = (table: Set<string>, name: string, fallback = "null") => (table.has(name) ? `\`${name}\`` : fallback);

    const rows = async (sql: string, values: unknown[] = []) => (await connection.query({ sql, values, rowsAsArray: false }))[0] as Row[];
    const organisations = (await rows("select id, slug, name, content_id, ancestry, closed, require_2sv, created_at from organisations order by id")).map(
      (row): SignonOrganisation => ({
        id: id(row["id"]),
        slug: text(row["slug"]),
        name: text(row["name"]),
        contentId: text(row["content_id"]),
        ancestry: text(row["ancestry"]).split("/").filter((part) => part !== "").map(Number),
        closed: flag(row["closed"]),
        require2sv: flag(row["require_2sv"]),
        createdAt: date(row["created_at"]),
      }),
    );
    const apiOnly = applicationColumns.has("api_only") ? "api_only" : applicationColumns.has("show_on_dashboard") ? "not show_on_dashboard" : "false";
    const applications = (
      await rows(
        `select id, name, uid, secret, redirect_uri, home_uri, ${optional(applicationColumns, "description")} as description, supports_push_updates, retired, ${apiOnly} as api_only, created_at from oauth_applications order by id`,
      )
    ).map(
      (row): SignonApplication => ({
        id: id(row["id"]),
        name: text(row["name"]),
        uid: text(row["uid"]),
        secret: text(row["secret"]),
        redirectUri: text(row["redirect_uri"]),
        homeUri: optionalText(row["home_uri"]),
        description: optionalText(row["description"]),
        supportsPushUpdates: flag(row["supports_push_updates"]),
        retired: flag(row["retired"]),
        apiOnly: flag(row["api_only"]),
        createdAt: date(row["created_at"]),
      }),
    );
    const supportedPermissions = (await rows("select id, application_id, name, delegatable, grantable_from_ui, `default` from supported_permissions order by id")).map(
      (row): SignonSupportedPermission => ({
        id: id(row["id"]),
        applicationId: id(row["application_id"]),
        name: text(row["name"]),
        delegatable: flag(row["delegatable"]),
        grantableFromUi: flag(row["grantable_from_ui"]),
        isDefault: flag(row["default"]),
      }),
    );
    const users = (
      await rows(
        `select id, uid, name, email, encrypted_password, password_salt, role, organisation_id, api_user, suspended_at, reason_for_suspension,
           ${optional(userColumns, "unsuspended_at")} as unsuspended_at, locked_at, require_2sv,
           ${optional(userColumns, "reason_for_2sv_exemption")} as reason_for_2sv_exemption,
           ${optional(userColumns, "expiry_date_for_2sv_exemption")} as expiry_date_for_2sv_exemption, otp_secret_key,
           ${userColumns.has("current_sign_in_at") ? "coalesce(current_sign_in_at, last_sign_in_at)" : optional(userColumns, "last_sign_in_at")} as last_signed_in_at,
           ${optional(userColumns, "invitation_sent_at")} as invitation_sent_at, ${optional(userColumns, "invitation_accepted_at")} as invitation_accepted_at,
           ${optional(userColumns, "password_changed_at")} as password_changed_at, ${optional(userColumns, "created_at")} as created_at,
           ${optional(userColumns, "updated_at")} as updated_at
         from users order by id`,
      )
    ).map(
      (row): SignonUser => ({
        id: id(row["id"]),
        uid: text(row["uid"]),
        name: text(row["name"]),
        email: text(row["email"]),
        encryptedPassword: optionalText(row["encrypted_password"]),
        passwordSalt: optionalText(row["password_salt"]),
        role: text(row["role"]) || "normal",
        organisationId: optionalId(row["organisation_id"]),
        apiUser: flag(row["api_user"]),
        suspendedAt: date(row["suspended_at"]),
        reasonForSuspension: optionalText(row["reason_for_suspension"]),
        unsuspendedAt: date(row["unsuspended_at"]),
        lockedAt: date(row["locked_at"]),
        require2sv: flag(row["require_2sv"]),
        reasonFor2svExemption: optionalText(row["reason_for_2sv_exemption"]),
        expiryDateFor2svExemption: date(row["expiry_date_for_2sv_exemption"]),
        otpSecretKey: optionalText(row["otp_secret_key"]),
        lastSignedInAt: date(row["last_signed_in_at"]),
        invitationSentAt: date(row["invitation_sent_at"]),
        invitationAcceptedAt: date(row["invitation_accepted_at"]),
        passwordChangedAt: date(row["password_changed_at"]),
        createdAt: date(row["created_at"]),
        updatedAt: date(row["updated_at"]),
      }),
    );
    const permissionColumns = columns.get("user_application_permissions")!;
    const permissionCount = Number((await rows("select count(*) as n from user_application_permissions"))[0]?.["n"]);
    const tokens = (
      await rows(
        `select id, resource_owner_id, application_id, token, refresh_token, created_at,
           case when expires_in is null then null else date_add(created_at, interval expires_in second) end as expires_at
         from oauth_access_tokens
         where revoked_at is null and (expires_in is null or date_add(created_at, interval expires_in second) > ?)
         order by id`,
        [now],
      )
    ).map(
      (row): SignonToken => ({
        id: id(row["id"]),
        userId: id(row["resource_owner_id"]),
        applicationId: id(row["application_id"]),
        token: text(row["token"]),
        refreshToken: optionalText(row["refresh_token"]),
        expiresAt: date(row["expires_at"]),
        createdAt: date(row["created_at"]) ?? now,
      }),
    );
    const oldPasswords = columns.has("old_passwords")
      ? (await rows("select password_archivable_id, encrypted_password, password_salt, created_at from old_passwords where password_archivable_type = 'User' order by id")).map(
          (row): SignonOldPassword => ({
            userId: id(row["password_archivable_id"]),
            encryptedPassword: text(row["encrypted_password"]),
            passwordSalt: optionalText(row["password_salt"]),
            createdAt: date(row["created_at"]),
          }),
        )
      : [];
    const lastSynced = optional(permissionColumns, "last_synced_at");
    return {
      data: { organisations, applications, supportedPermissions, users, permissionCount, tokens, oldPasswords, readAt: now },
      async *permissions(batchSize = 50_000) {
        // By the unique key's order, from where the last batch ended.
        let after: [number, number, number] = [0, 0, 0];
        for (;;) {
          const batch = (
            await rows(
              `select user_id, application_id, supported_permission_id, ${lastSynced} as last_synced_at from user_application_permissions
               where user_id > ? or (user_id = ? and (application_id > ? or (application_id = ? and supported_permission_id > ?)))
               order by user_id, application_id, supported_permission_id limit ?`,
              [after[0], after[0], after[1], after[1], after[2], batchSize],
            ).catch((error: Error) => {
              throw new SignonSourceError(`Cannot read the Signon database's permissions: ${error.message}`);
            })
          ).map(
            (row): SignonUserPermission => ({
              userId: id(row["user_id"]),
              applicationId: id(row["application_id"]),
              supportedPermissionId: id(row["supported_permission_id"]),
              lastSyncedAt: date(row["last_synced_at"]),
            }),
          );
          if (batch.length === 0) return;
          yield batch;
          const last = batch.at(-1)!;
          after = [last.userId, last.applicationId, last.supportedPermissionId];
          if (batch.length < batchSize) return;
        }
      },
      close,
    };
  } catch (error) {
    await close();
    if (error instanceof SignonSourceError) throw error;
    throw new SignonSourceError(`Cannot read the Signon database: ${(error as Error).message}`);
  }
}

/** A connection to the Signon database, reading times as UTC (as Rails writes them) and big numbers as text. */
async function connectToSignon(url: string): Promise<mysql.Connection> {
  try {
    return await mysql.createConnection({ uri: url, timezone: "Z", supportBigNumbers: true, bigNumberStrings: true, connectTimeout: 10_000 });
  } catch (error) {
    throw new SignonSourceError(`Cannot connect to the Signon database: ${(error as Error).message}`);
  }
}

/** Each table of the current database with its columns. */
async function tableColumns(connection: mysql.Connection): Promise<Map<string, Set<string>>> {
  const [rows] = await connection.query("select table_name as t, column_name as c from information_schema.columns where table_schema = database()");
  const tables = new Map<string, Set<string>>();
  for (const row of rows as Row[]) {
    const table = text(row["t"]);
    if (!tables.has(table)) tables.set(table, new Set());
    tables.get(table)!.add(text(row["c"]));
  }
  return tables;
}

export interface SignonEvent {
  id: number;
  /** The uid of the person it is about. */
  uid: string | null;
  createdAt: Date;
  initiatorId: number | null;
  applicationId: number | null;
  message: string | null;
  eventId: number;
  /** `ip_address` as Signon stored it (an integer, as text). */
  ipAddress: string | null;
  userAgent: string | null;
}

/**
 * Signon's event log after `afterId`, in order of id, `batchSize` at a time
 * (a million of them do not fit comfortably in memory at once).
 */
export async function* readSignonEvents(url: string, afterId: number, batchSize = 20_000): AsyncGenerator<SignonEvent[]> {
  const connection = await connectToSignon(url);
  try {
    const [tables] = await connection.query("select count(*) as n from information_schema.tables where table_schema = database() and table_name = 'event_logs'");
    if (Number((tables as Row[])[0]?.["n"]) === 0) return;
    let last = afterId;
    for (;;) {
      const [rows] = await connection.query(
        "select id, uid, created_at, initiator_id, application_id, trailing_message, event_id, cast(ip_address as char) as ip, user_agent_string from event_logs where id > ? order by id limit ?",
        [last, batchSize],
      );
      const events = (rows as Row[]).map(
        (row): SignonEvent => ({
          id: id(row["id"]),
          uid: optionalText(row["uid"]),
          createdAt: date(row["created_at"]) ?? new Date(0),
          initiatorId: optionalId(row["initiator_id"]),
          applicationId: optionalId(row["application_id"]),
          message: optionalText(row["trailing_message"]),
          eventId: id(row["event_id"]),
          ipAddress: optionalText(row["ip"]),
          userAgent: optionalText(row["user_agent_string"]),
        }),
      );
      if (events.length === 0) return;
      yield events;
      last = events.at(-1)!.id;
      if (events.length < batchSize) return;
    }
  } catch (error) {
    if (error instanceof SignonSourceError) throw error;
    throw new SignonSourceError(`Cannot read the Signon database's event log: ${(error as Error).message}`);
  } finally {
    await connection.end().catch(() => undefined);
  }
}
