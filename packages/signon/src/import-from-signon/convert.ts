import { createHash } from "node:crypto";
import type { EmailPolicy } from "../config.js";
import { emailPolicyProblem } from "../accounts/email-policy.js";
import { signonSha512Hash } from "../accounts/imported-passwords.js";
import { sealSecret } from "../security/secret-box.js";
import { sha256Hex } from "../security/random.js";
import { decryptActiveRecordValue, UnreadableEncryptedValue } from "./active-record-encryption.js";
import type { SignonApplication, SignonData, SignonOrganisation, SignonUser, SignonUserPermission } from "./signon-source.js";

/**
 * Signon's rows turned into Sign-on's, each with the Signon key it came from
 * and a fingerprint of what it brings (a second run applies only the rows
 * whose fingerprint changed), and everything that cannot come over, with why.
 */
export interface ConvertedData {
  organisations: OrganisationRow[];
  applications: ApplicationRow[];
  users: UserRow[];
  passwords: PasswordRow[];
  twoStepSecrets: TwoStepSecretRow[];
  /** Turns a batch of Signon's permissions into Sign-on's (they are read in batches). */
  convertPermissions: PermissionConverter;
  tokens: TokenRow[];
  refusals: Refusal[];
  /** People with 2-step set up in Signon whose secret could not be opened (no keys, or other keys): asked to set it up again. */
  twoStepToSetUpAgain: number;
  /** Their ledger keys (`two-step:<id>`): a secret an earlier run brought stays as it is. */
  unopenedTwoStepKeys: string[];
}

/** Something of Signon's the import leaves behind, and why. */
export interface Refusal {
  kind: "organisation" | "application" | "user" | "permission" | "token" | "two-step exemption";
  /** Which one: a slug, a client id, an e-mail address, "address → application: permission". */
  what: string;
  reason: string;
}

interface Keyed {
  /** The Signon row's key, unique within its kind. */
  key: string;
  fingerprint: string;
}

export interface OrganisationRow extends Keyed {
  slug: string;
  name: string;
  contentId: string;
  parentKey: string | null;
  closed: boolean;
  twoStepRequired: boolean;
  createdAt: Date;
}

export interface ApplicationRow extends Keyed {
  name: string;
  clientId: string;
  clientSecretHash: string;
  redirectUris: string[];
  homeUri: string | null;
  /** Where Signon pushed: the first redirect URI's origin, then gds-sso's `/auth/gds/api`. */
  pushBaseUrl: string;
  retired: boolean;
  apiOnly: boolean;
  pushEnabled: boolean;
  supportedPermissions: string[];
  delegatablePermissions: string[];
  defaultPermissions: string[];
  permissionsNotGrantableInUi: string[];
  createdAt: Date;
}

export interface UserRow extends Keyed {
  uid: string;
  name: string;
  email: string;
  role: string;
  organisationKey: string | null;
  isApiUser: boolean;
  suspendedAt: Date | null;
  suspensionReason: string | null;
  unsuspendedAt: Date | null;
  lockedAt: Date | null;
  twoStepRequired: boolean;
  twoStepExemptionReason: string | null;
  twoStepExemptUntil: Date | null;
  lastSignedInAt: Date | null;
  invitationSentAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A person's password (the current one, then the ones Signon remembers), kept apart so that a re-run replaces it only when Signon's changed. */
export interface PasswordRow extends Keyed {
  uid: string;
  /** The current hash in Sign-on's form for imported hashes; null for someone who never set one (invited). */
  passwordHash: string | null;
  passwordChangedAt: Date | null;
  /** Earlier hashes, oldest first, for the password history. */
  history: { passwordHash: string; createdAt: Date }[];
}

export interface TwoStepSecretRow extends Keyed {
  uid: string;
  /** The base32 secret sealed as Sign-on seals its own. */
  sealed: string;
  enabledAt: Date;
}

/** One permission of one person; the ledger keeps each person's set (see applyPermissions). */
export interface PermissionRow {
  uid: string;
  applicationKey: string;
  permission: string;
  lastSyncedAt: Date | null;
}

/** Converts Signon's permissions batch by batch, and says at the end which were left behind. */
export interface PermissionConverter {
  /** Permissions of retired applications left behind, by application. */
  retired: Map<string, number>;
  convert(batch: SignonUserPermission[]): PermissionRow[];
  refusals(): Refusal[];
}

export interface TokenRow extends Keyed {
  uid: string;
  applicationKey: string;
  /** SHA-256 of the token, as Sign-on stores its own. */
  tokenHash: string;
  refreshTokenHash: string | null;
  /** An API user's pre-issued token (an `issued` grant); otherwise a token of the sign-in flow. */
  issued: boolean;
  expiresAt: Date;
  createdAt: Date;
}

export interface ConvertOptions {
  now: Date;
  emailPolicy: EmailPolicy;
  /** Devise's stretches in Signon's production (1,000 unless it was changed). */
  stretches: number;
  /** The Active Record encryption keys, derived (see derivedKeys); none when the operator gave none. */
  activeRecordKeys: Buffer[];
  /** Sign-on's secret key, which seals the 2-step secrets. */
  secretKey: Buffer;
}

const roles = new Set(["superadmin", "admin", "super_organisation_admin", "organisation_admin", "normal"]);
/** PostgreSQL's text holds no NUL character: a value with one is refused (a name, an address) or loses it (a reason). */
const hasNul = (value: string | null) => value !== null && value.includes("\u0000");
const withoutNul = (value: string | null) => (value === null ? null : value.replaceAll("\u0000", ""));
/** A permission name Sign-on can keep: not empty, at most 255 characters, no NUL or line break (a person's set is kept one per line). */
const permissionNameUsable = (name: string) => name.trim() !== "" && name.length <= 255 && !hasNul(name) && !/[\r\n]/.test(name);
/** Devise's salts: its friendly tokens (URL-safe base64). */
const saltShape = /^[A-Za-z0-9_\-./+=]{1,64}$/;
/** What PostgreSQL's `uuid` takes, in lower case (Signon's uids are time-based, without RFC variant bits). */
export const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** How long a token Signon gave no expiry lasts here (Sign-on's tokens all have one): ten years, the longest it issues. */
const neverExpiringTokenSeconds = 10 * 365 * 24 * 3600;
/** An exemption from 2-step Signon kept without an end date gets one: 90 days after the import. */
const openExemptionDays = 90;

function fingerprint(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("base64url").slice(0, 22);
}

/**
 * The row with its key and the fingerprint of `source`: what Signon holds (the row itself by default). A row
 * whose values fall back to the time of the run takes the fingerprint of Signon's own values, which do not move.
 */
function keyed<T extends object>(key: string, row: T, source: unknown = row): T & Keyed {
  return { ...row, key, fingerprint: fingerprint(source) };
}

/** Signon's `encrypted_password` (and salt) in the form Sign-on stores it, or null when there is none. */
export function importedPasswordHash(encrypted: string | null, salt: string | null, stretches: number): string | null {
  if (encrypted === null || encrypted === "") return null;
  if (/^\$2[aby]\$/.test(encrypted)) return encrypted;
  if (/^[0-9a-f]{128}$/i.test(encrypted) && salt && saltShape.test(salt)) return signonSha512Hash(stretches, salt, encrypted);
  return null;
}

/** Turns what was read from Signon into Sign-on's rows. */
export function convertSignonData(data: SignonData, options: ConvertOptions): ConvertedData {
  const { now } = options;
  const refusals: Refusal[] = [];
  const organisationKey = (id: number) => `organisation:${id}`;
  const applicationKey = (id: number) => `application:${id}`;

  const organisationsById = new Map(data.organisations.map((organisation) => [organisation.id, organisation]));
  const organisations: OrganisationRow[] = [];
  const keptOrganisations = new Set<number>();
  for (const organisation of data.organisations) {
    const problem = organisationProblem(organisation, organisationsById);
    if (problem) {
      refusals.push({ kind: "organisation", what: organisation.slug, reason: problem });
      continue;
    }
    keptOrganisations.add(organisation.id);
  }
  for (const organisation of data.organisations) {
    if (!keptOrganisations.has(organisation.id)) continue;
    const parent = organisation.ancestry.at(-1);
    organisations.push(
      keyed(organisationKey(organisation.id), {
        slug: organisation.slug,
        name: organisation.name,
        contentId: organisation.contentId.toLowerCase(),
        parentKey: parent !== undefined && keptOrganisations.has(parent) ? organisationKey(parent) : null,
        closed: organisation.closed,
        twoStepRequired: organisation.require2sv,
        createdAt: organisation.createdAt ?? now,
      }),
    );
  }
  // Parents before their children, so that each parent exists when a child names it.
  const depth = (row: OrganisationRow) => organisationsById.get(Number(row.key.split(":")[1]))!.ancestry.length;
  organisations.sort((a, b) => depth(a) - depth(b));

  const permissionsOf = new Map<number, typeof data.supportedPermissions>();
  for (const permission of data.supportedPermissions) permissionsOf.set(permission.applicationId, [...(permissionsOf.get(permission.applicationId) ?? []), permission]);
  const applications: ApplicationRow[] = [];
  const applicationsById = new Map<number, SignonApplication>();
  for (const application of data.applications) {
    const problem = applicationProblem(application);
    if (problem) {
      refusals.push({ kind: "application", what: `${application.name} (${application.uid})`, reason: problem });
      continue;
    }
    applicationsById.set(application.id, application);
    const supported = (permissionsOf.get(application.id) ?? []).filter((permission) => {
      if (permissionNameUsable(permission.name)) return true;
      refusals.push({ kind: "permission", what: `${application.name}: ${JSON.stringify(permission.name)}`, reason: "The permission's name is empty, longer than 255 characters, or holds a NUL character or a line break" });
      return false;
    });
    const names = (filter: (permission: (typeof supported)[number]) => boolean) => supported.filter(filter).map((permission) => permission.name);
    applications.push(
      keyed(applicationKey(application.id), {
        name: application.name,
        clientId: application.uid,
        clientSecretHash: sha256Hex(application.secret),
        redirectUris: redirectUrisOf(application.redirectUri),
        homeUri: application.homeUri || null,
        pushBaseUrl: `${new URL(redirectUrisOf(application.redirectUri)[0]!).origin}/auth/gds/api`,
        retired: application.retired,
        apiOnly: application.apiOnly,
        pushEnabled: application.supportsPushUpdates,
        supportedPermissions: [...new Set(["signin", ...names(() => true)])],
        delegatablePermissions: names((permission) => permission.delegatable),
        defaultPermissions: names((permission) => permission.isDefault),
        permissionsNotGrantableInUi: names((permission) => !permission.grantableFromUi),
        createdAt: application.createdAt ?? now,
      }),
    );
  }

  const users: UserRow[] = [];
  const passwords: PasswordRow[] = [];
  const twoStepSecrets: TwoStepSecretRow[] = [];
  let twoStepToSetUpAgain = 0;
  const unopenedTwoStepKeys: string[] = [];
  const usersById = new Map<number, SignonUser>();
  const seenEmails = new Set<string>();
  const oldPasswordsOf = new Map<number, typeof data.oldPasswords>();
  for (const old of data.oldPasswords) oldPasswordsOf.set(old.userId, [...(oldPasswordsOf.get(old.userId) ?? []), old]);
  for (const user of data.users) {
    const email = user.email.trim().toLowerCase();
    const problem = userProblem(user, email, options.emailPolicy, organisationsById, keptOrganisations) ?? (seenEmails.has(email) ? "Another Signon account has the same address" : null);
    if (problem) {
      refusals.push({ kind: "user", what: email || `Signon user ${user.id}`, reason: problem });
      continue;
    }
    seenEmails.add(email);
    usersById.set(user.id, user);
    const uid = user.uid.toLowerCase();
    let exemptionReason = user.reasonFor2svExemption && !user.require2sv ? withoutNul(user.reasonFor2svExemption)!.trim() || null : null;
    let exemptUntil = exemptionReason ? user.expiryDateFor2svExemption : null;
    if (exemptionReason && exemptUntil === null) {
      exemptUntil = new Date(now.getTime() + openExemptionDays * 86_400_000);
      refusals.push({ kind: "two-step exemption", what: email, reason: `Exempted from 2-step in Signon with no end date: the exemption ends ${exemptUntil.toISOString().slice(0, 10)}, ${openExemptionDays} days after the import` });
    }
    if (exemptionReason && exemptUntil !== null && exemptUntil.getTime() <= now.getTime()) exemptionReason = exemptUntil = null;
    users.push(
      keyed(`user:${user.id}`, {
        uid,
        name: user.name,
        email,
        role: user.role,
        organisationKey: user.organisationId === null ? null : organisationKey(user.organisationId),
        isApiUser: user.apiUser,
        suspendedAt: user.suspendedAt,
        suspensionReason: user.suspendedAt ? withoutNul(user.reasonForSuspension)?.trim() || "Suspended in Signon (no reason recorded)" : null,
        unsuspendedAt: user.unsuspendedAt,
        lockedAt: user.lockedAt,
        twoStepRequired: user.require2sv,
        twoStepExemptionReason: exemptionReason,
        twoStepExemptUntil: exemptUntil,
        lastSignedInAt: user.lastSignedInAt,
        invitationSentAt: user.invitationSentAt,
        createdAt: user.createdAt ?? now,
        updatedAt: user.updatedAt ?? user.createdAt ?? now,
      }, { ...user, updatedAt: null, otpSecretKey: null, encryptedPassword: null, passwordSalt: null }),
    );
    const history = (oldPasswordsOf.get(user.id) ?? [])
      .map((old) => ({ passwordHash: importedPasswordHash(old.encryptedPassword, old.passwordSalt, options.stretches), createdAt: old.createdAt ?? now }))
      .filter((old): old is { passwordHash: string; createdAt: Date } => old.passwordHash !== null);
    const current = user.apiUser ? null : importedPasswordHash(user.encryptedPassword, user.passwordSalt, options.stretches);
    // Someone invited who never accepted has no password of their own yet.
    const invited = user.invitationSentAt !== null && user.invitationAcceptedAt === null;
    const signonPasswords = { current: user.encryptedPassword, salt: user.passwordSalt, invited, changed: user.passwordChangedAt, old: oldPasswordsOf.get(user.id) ?? [] };
    passwords.push(keyed(`password:${user.id}`, { uid, passwordHash: invited ? null : current, passwordChangedAt: user.passwordChangedAt, history }, signonPasswords));
    if (user.otpSecretKey) {
      const secret = openTwoStepSecret(user.otpSecretKey, options.activeRecordKeys);
      if (secret === null) {
        twoStepToSetUpAgain += 1;
        unopenedTwoStepKeys.push(`two-step:${user.id}`);
      }
      else {
        // The fingerprint is of Signon's value: sealing again would change it at every run.
        twoStepSecrets.push({ key: `two-step:${user.id}`, fingerprint: fingerprint(user.otpSecretKey), uid, sealed: sealSecret(options.secretKey, secret), enabledAt: user.updatedAt ?? now });
      }
    }
  }

  const supportedById = new Map(data.supportedPermissions.map((permission) => [permission.id, permission]));
  const uidOf = new Map([...usersById].map(([id, user]) => [id, user.uid.toLowerCase()]));
  const applicationKeyOf = new Map([...applicationsById.keys()].map((id) => [id, applicationKey(id)]));
  const convertPermissions: PermissionConverter = {
    retired: new Map(),
    convert(batch) {
      const rows: PermissionRow[] = [];
      for (const grant of batch) {
        const uid = uidOf.get(grant.userId);
        const application = applicationsById.get(grant.applicationId);
        const supported = supportedById.get(grant.supportedPermissionId);
        if (supported && !permissionNameUsable(supported.name)) continue;
        if (uid === undefined || !supported || !application) continue;
        if (application.retired) {
          this.retired.set(application.name, (this.retired.get(application.name) ?? 0) + 1);
          continue;
        }
        rows.push({ uid, applicationKey: applicationKeyOf.get(grant.applicationId)!, permission: supported.name, lastSyncedAt: grant.lastSyncedAt });
      }
      return rows;
    },
    refusals() {
      return [...this.retired].map(([name, count]) => ({ kind: "permission" as const, what: `${name} (${count} ${count === 1 ? "permission" : "permissions"})`, reason: "The application is retired" }));
    },
  };

  const tokens: TokenRow[] = [];
  for (const token of data.tokens) {
    const user = usersById.get(token.userId);
    const application = applicationsById.get(token.applicationId);
    if (!user || !application || application.retired) continue;
    tokens.push(
      keyed(`token:${token.id}`, {
        uid: user.uid.toLowerCase(),
        applicationKey: applicationKey(token.applicationId),
        tokenHash: sha256Hex(token.token),
        refreshTokenHash: token.refreshToken ? sha256Hex(token.refreshToken) : null,
        issued: user.apiUser,
        expiresAt: token.expiresAt ?? new Date(token.createdAt.getTime() + neverExpiringTokenSeconds * 1000),
        createdAt: token.createdAt,
      }),
    );
  }
  return { organisations, applications, users, passwords, twoStepSecrets, convertPermissions, tokens, refusals, twoStepToSetUpAgain, unopenedTwoStepKeys };
}

function organisationProblem(organisation: SignonOrganisation, byId: Map<number, SignonOrganisation>): string | null {
  if (!uuidShape.test(organisation.contentId.toLowerCase())) return `Its content id ${JSON.stringify(organisation.contentId)} is not a UUID`;
  if (organisation.name.length === 0 || organisation.name.length > 200) return "Its name is empty or longer than 200 characters";
  if (hasNul(organisation.name)) return "Its name holds a NUL character";
  if (!/^[a-z0-9][a-z0-9-]*$/.test(organisation.slug)) return "Its slug has characters other than lower-case letters, digits and hyphens";
  if (organisation.ancestry.some((ancestor) => !byId.has(ancestor) || ancestor === organisation.id)) return "Its ancestry names an organisation that does not exist (or itself)";
  return null;
}

function applicationProblem(application: SignonApplication): string | null {
  if (application.name.length === 0 || application.name.length > 200) return "Its name is empty or longer than 200 characters";
  if (application.uid === "" || application.secret === "") return "It has no client id or no secret";
  if ([application.name, application.uid, application.secret, application.redirectUri, application.homeUri].some(hasNul)) return "A field of it holds a NUL character";
  if (redirectUrisOf(application.redirectUri).length === 0) return `Its redirect URI ${JSON.stringify(application.redirectUri)} is not an absolute URL`;
  return null;
}

function userProblem(user: SignonUser, email: string, policy: EmailPolicy, organisations: Map<number, SignonOrganisation>, kept: Set<number>): string | null {
  if (!uuidShape.test(user.uid.toLowerCase())) return `Its uid ${JSON.stringify(user.uid)} is not in UUID form`;
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) return "Its e-mail address is not one Sign-on can use";
  const policyProblem = user.apiUser ? null : emailPolicyProblem(policy, email);
  if (policyProblem) return `Sign-on's e-mail policy refuses it: ${policyProblem}`;
  if (user.name.trim() === "" || user.name.length > 200) return "Its name is empty or longer than 200 characters";
  if (hasNul(user.name) || hasNul(email)) return "Its name or address holds a NUL character";
  if (!roles.has(user.role)) return `Its role ${JSON.stringify(user.role)} is not one of Sign-on's`;
  if (user.organisationId !== null && (!organisations.has(user.organisationId) || !kept.has(user.organisationId))) return "Its organisation was not imported";
  if ((user.role === "organisation_admin" || user.role === "super_organisation_admin") && user.organisationId === null) return "An organisation admin with no organisation";
  return null;
}

/** Doorkeeper keeps several redirect URIs in one column, one per line. */
function redirectUrisOf(value: string): string[] {
  return value
    .split(/\s+/)
    .filter((uri) => uri !== "")
    .filter((uri) => {
      try {
        return ["http:", "https:"].includes(new URL(uri).protocol);
      } catch {
        return false;
      }
    });
}

function openTwoStepSecret(stored: string, keys: Buffer[]): string | null {
  if (keys.length === 0) return null;
  try {
    const secret = decryptActiveRecordValue(stored, keys).trim().toUpperCase();
    return /^[A-Z2-7]+=*$/.test(secret) ? secret : null;
  } catch (error) {
    if (error instanceof UnreadableEncryptedValue) return null;
    throw error;
  }
}
