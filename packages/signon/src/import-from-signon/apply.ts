import { createHash, randomUUID } from "node:crypto";
import { sql, type SQL } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import type { ConvertedData, OrganisationRow, PermissionRow, Refusal } from "./convert.js";

/** What a run did to one kind of row. */
export interface KindCounts {
  created: number;
  updated: number;
  unchanged: number;
  /** Brought over by an earlier run and gone from Signon since: taken back (a permission revoked, a token revoked). */
  removed: number;
}

export type ImportedKind = "organisations" | "applications" | "users" | "passwords" | "twoStepSecrets" | "permissions" | "tokens" | "events";
export type ImportCounts = Record<ImportedKind, KindCounts>;

interface LedgerEntry {
  fingerprint: string;
  target: string;
}

/** Rows of a statement's answer, as drizzle's node-postgres driver returns them. */
type Rows<T> = { rows: T[] };

/** An array as one parameter (drizzle would otherwise spread it into a list). */
const array = (values: unknown[]): SQL => sql`${sql.param(values)}`;

const batchSize = 5000;

/** The ledger's key for the last Signon event brought over (the event log only grows). */
const eventWatermarkKey = "event-logs";

function batches<T>(rows: T[]): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < rows.length; start += batchSize) result.push(rows.slice(start, start + batchSize));
  return result;
}

/**
 * Writes converted Signon data into Sign-on's tables inside the caller's
 * transaction: each row whose Signon key is new, or whose fingerprint differs
 * from the ledger's, is created or updated; rows an earlier run brought that
 * Signon no longer has are taken back (permissions removed, tokens revoked;
 * people, organisations and applications are left as they are, and counted);
 * the ledger is brought up to date. Rows that cannot be written (an e-mail
 * address or an application name that another account or application here
 * already has) are added to `refusals`.
 */
export async function applyConverted(
  db: SignonDatabase,
  data: ConvertedData,
  refusals: Refusal[],
  now: Date,
): Promise<{ counts: Omit<ImportCounts, "events" | "permissions">; applicationIds: Map<string, string>; importedUids: Set<string> }> {
  const ledger = new Map<string, LedgerEntry>();
  // Permissions (a million of them) are kept per person: see applyPermissions.
  const { rows: ledgerRows } = (await db.execute(
    sql`select key, fingerprint, target from signon.signon_import_ledger where key not like 'permissions:%' and key <> ${eventWatermarkKey}`,
  )) as unknown as Rows<{ key: string; fingerprint: string; target: string }>;
  for (const row of ledgerRows) ledger.set(row.key, { fingerprint: row.fingerprint, target: row.target });
  const written: { key: string; fingerprint: string; target: string }[] = [];
  const taken: string[] = [];
  const counts = {} as Omit<ImportCounts, "events" | "permissions">;

  /** Splits `rows` by what the ledger knows of them, and counts what is gone. */
  const plan = <T extends { key: string; fingerprint: string }>(kind: Exclude<ImportedKind, "events" | "permissions">, prefix: string, rows: T[]) => {
    const fresh: T[] = [];
    const changed: T[] = [];
    const present = new Set<string>();
    for (const row of rows) {
      present.add(row.key);
      const known = ledger.get(row.key);
      if (!known) fresh.push(row);
      else if (known.fingerprint !== row.fingerprint) changed.push(row);
    }
    const gone = [...ledger.keys()].filter((key) => key.startsWith(prefix) && !present.has(key));
    counts[kind] = { created: fresh.length, updated: changed.length, unchanged: rows.length - fresh.length - changed.length, removed: 0 };
    return { fresh, changed, gone };
  };

  // Organisations, parents first: matched by the ledger, then by content id, then by slug.
  const organisationIds = new Map<string, string>();
  for (const [key, entry] of ledger) if (key.startsWith("organisation:")) organisationIds.set(key, entry.target);
  const organisations = plan("organisations", "organisation:", data.organisations);
  const organisationsToWrite = new Set([...organisations.fresh, ...organisations.changed]);
  for (const row of data.organisations.filter((organisation) => organisationsToWrite.has(organisation))) {
    const id = organisationIds.get(row.key) ?? (await existingOrganisation(db, row)) ?? randomUUID();
    organisationIds.set(row.key, id);
    const parentId = row.parentKey === null ? null : (organisationIds.get(row.parentKey) ?? null);
    await db.execute(sql`
      insert into signon.organisations (id, slug, name, content_id, parent_id, closed, two_step_required, created_at)
      values (${id}, ${row.slug}, ${row.name}, ${row.contentId}, ${parentId}, ${row.closed}, ${row.twoStepRequired}, ${row.createdAt})
      on conflict (id) do update set slug = excluded.slug, name = excluded.name, content_id = excluded.content_id,
        parent_id = excluded.parent_id, closed = excluded.closed, two_step_required = excluded.two_step_required`);
    written.push({ key: row.key, fingerprint: row.fingerprint, target: id });
  }
  counts.organisations.removed = organisations.gone.length;

  // Applications: matched by the ledger, then by client id; another application of the same name here is a refusal.
  const applicationIds = new Map<string, string>();
  for (const [key, entry] of ledger) if (key.startsWith("application:")) applicationIds.set(key, entry.target);
  const applications = plan("applications", "application:", data.applications);
  const refusedApplications = new Set<string>();
  for (const row of [...applications.fresh, ...applications.changed]) {
    const { rows: existing } = (await db.execute(sql`
      select id, client_id, name from signon.applications where client_id = ${row.clientId} or name = ${row.name}`)) as unknown as Rows<{ id: string; client_id: string; name: string }>;
    const own = applicationIds.get(row.key) ?? existing.find((application) => application.client_id === row.clientId)?.id;
    const clash = existing.find((application) => application.id !== own && (application.name === row.name || application.client_id === row.clientId));
    if (clash) {
      refusals.push({ kind: "application", what: `${row.name} (${row.clientId})`, reason: clash.client_id === row.clientId ? "Another application here has the same client id" : `Another application here is named ${row.name}` });
      refusedApplications.add(row.key);
      counts.applications[applications.fresh.includes(row) ? "created" : "updated"] -= 1;
      continue;
    }
    const id = own ?? randomUUID();
    applicationIds.set(row.key, id);
    await db.execute(sql`
      insert into signon.applications (id, name, client_id, client_secret_hash, redirect_uris, home_uri, push_base_url, retired, api_only, push_enabled,
        supported_permissions, delegatable_permissions, default_permissions, permissions_not_grantable_in_ui, created_at)
      values (${id}, ${row.name}, ${row.clientId}, ${row.clientSecretHash}, ${array(row.redirectUris)}::text[], ${row.homeUri}, ${row.pushBaseUrl}, ${row.retired}, ${row.apiOnly},
        ${row.pushEnabled}, ${array(row.supportedPermissions)}::text[], ${array(row.delegatablePermissions)}::text[], ${array(row.defaultPermissions)}::text[],
        ${array(row.permissionsNotGrantableInUi)}::text[], ${row.createdAt})
      on conflict (id) do update set name = excluded.name, client_id = excluded.client_id, client_secret_hash = excluded.client_secret_hash,
        redirect_uris = excluded.redirect_uris, home_uri = excluded.home_uri, push_base_url = excluded.push_base_url, retired = excluded.retired, api_only = excluded.api_only,
        push_enabled = excluded.push_enabled, supported_permissions = excluded.supported_permissions,
        delegatable_permissions = excluded.delegatable_permissions, default_permissions = excluded.default_permissions,
        permissions_not_grantable_in_ui = excluded.permissions_not_grantable_in_ui`);
    written.push({ key: row.key, fingerprint: row.fingerprint, target: id });
  }
  counts.applications.removed = applications.gone.length;

  // People: by uid; an address that another account here has is a refusal. A new person's row takes their password
  // and 2-step secret at once (a second write of a million rows would rewrite every index of users).
  const users = plan("users", "user:", data.users);
  const passwords = plan("passwords", "password:", data.passwords);
  const secrets = plan("twoStepSecrets", "two-step:", data.twoStepSecrets);
  const passwordOf = new Map([...passwords.fresh, ...passwords.changed].map((row) => [row.uid, row]));
  const secretOf = new Map([...secrets.fresh, ...secrets.changed].map((row) => [row.uid, row]));
  const inserted = new Set<string>();
  const refusedUids = new Set<string>();
  for (const batch of batches([...users.fresh, ...users.changed])) {
    const { rows: clashes } = (await db.execute(sql`
      select u.uid, lower(u.email) as email from signon.users u
      where lower(u.email) = any(${array(batch.map((row) => row.email))}::text[]) and not (u.uid = any(${array(batch.map((row) => row.uid))}::uuid[]))`)) as unknown as Rows<{
      uid: string;
      email: string;
    }>;
    const addressesHere = new Set(clashes.map((clash) => clash.email));
    const writable = batch.filter((row) => {
      if (!addressesHere.has(row.email)) return true;
      refusals.push({ kind: "user", what: row.email, reason: "Another account here has this address" });
      refusedUids.add(row.uid);
      counts.users[users.fresh.includes(row) ? "created" : "updated"] -= 1;
      return false;
    });
    const column = <V>(pick: (row: (typeof writable)[number]) => V) => array(writable.map(pick));
    const result = (await db.execute(sql`
      insert into signon.users (uid, name, email, role, organisation_id, is_api_user, suspended_at, suspension_reason, unsuspended_at, locked_at,
        two_step_required, two_step_exemption_reason, two_step_exempt_until, last_signed_in_at, invitation_sent_at, created_at, updated_at,
        password_hash, password_changed_at, otp_secret_encrypted, otp_enabled_at)
      select * from unnest(${column((row) => row.uid)}::uuid[], ${column((row) => row.name)}::text[], ${column((row) => row.email)}::text[],
        ${column((row) => row.role)}::text[], ${column((row) => (row.organisationKey === null ? null : (organisationIds.get(row.organisationKey) ?? null)))}::uuid[],
        ${column((row) => row.isApiUser)}::boolean[], ${column((row) => row.suspendedAt)}::timestamptz[], ${column((row) => row.suspensionReason)}::text[],
        ${column((row) => row.unsuspendedAt)}::timestamptz[], ${column((row) => row.lockedAt)}::timestamptz[], ${column((row) => row.twoStepRequired)}::boolean[],
        ${column((row) => row.twoStepExemptionReason)}::text[], ${column((row) => row.twoStepExemptUntil)}::timestamptz[],
        ${column((row) => row.lastSignedInAt)}::timestamptz[], ${column((row) => row.invitationSentAt)}::timestamptz[],
        ${column((row) => row.createdAt)}::timestamptz[], ${column((row) => row.updatedAt)}::timestamptz[],
        ${column((row) => passwordOf.get(row.uid)?.passwordHash ?? null)}::text[], ${column((row) => passwordOf.get(row.uid)?.passwordChangedAt ?? null)}::timestamptz[],
        ${column((row) => secretOf.get(row.uid)?.sealed ?? null)}::text[], ${column((row) => secretOf.get(row.uid)?.enabledAt ?? null)}::timestamptz[])
      on conflict (uid) do update set name = excluded.name, email = excluded.email, role = excluded.role, organisation_id = excluded.organisation_id,
        is_api_user = excluded.is_api_user, suspended_at = excluded.suspended_at, suspension_reason = excluded.suspension_reason,
        unsuspended_at = excluded.unsuspended_at, locked_at = excluded.locked_at, two_step_required = excluded.two_step_required,
        two_step_exemption_reason = excluded.two_step_exemption_reason, two_step_exempt_until = excluded.two_step_exempt_until,
        last_signed_in_at = greatest(signon.users.last_signed_in_at, excluded.last_signed_in_at), invitation_sent_at = excluded.invitation_sent_at,
        updated_at = ${now}
      returning uid, xmax = 0 as inserted`)) as unknown as Rows<{ uid: string; inserted: boolean }>;
    for (const row of result.rows) if (row.inserted) inserted.add(row.uid);
    for (const row of writable) written.push({ key: row.key, fingerprint: row.fingerprint, target: row.uid });
  }
  counts.users.removed = users.gone.length;
  // A person refused above brings no password or 2-step secret either.
  for (const uid of refusedUids) {
    const password = passwordOf.get(uid);
    if (password) counts.passwords[passwords.fresh.includes(password) ? "created" : "updated"] -= 1;
    const secret = secretOf.get(uid);
    if (secret) counts.twoStepSecrets[secrets.fresh.includes(secret) ? "created" : "updated"] -= 1;
  }
  const importedUids = new Set([...ledger.entries()].filter(([key]) => key.startsWith("user:")).map(([, entry]) => entry.target));
  for (const row of data.users) if (!refusedUids.has(row.uid)) importedUids.add(row.uid);
  const imported = (uid: string) => importedUids.has(uid) && !refusedUids.has(uid);

  // Passwords, apart, so that a password already replaced here at a sign-in stays until Signon's changes.
  for (const batch of batches([...passwords.fresh, ...passwords.changed].filter((row) => imported(row.uid)))) {
    const uids = array(batch.map((row) => row.uid));
    const existing = batch.filter((row) => !inserted.has(row.uid));
    if (existing.length > 0) {
      await db.execute(sql`
        update signon.users u set password_hash = p.password_hash, password_changed_at = p.changed_at, new_password_required = false
        from unnest(${array(existing.map((row) => row.uid))}::uuid[], ${array(existing.map((row) => row.passwordHash))}::text[],
          ${array(existing.map((row) => row.passwordChangedAt))}::timestamptz[]) as p(uid, password_hash, changed_at)
        where u.uid = p.uid`);
    }
    await db.execute(sql`delete from signon.password_history where user_uid = any(${uids}::uuid[])`);
    const history = batch.flatMap((row) => [
      ...row.history.map((old) => ({ uid: row.uid, hash: old.passwordHash, at: old.createdAt })),
      ...(row.passwordHash === null ? [] : [{ uid: row.uid, hash: row.passwordHash, at: row.passwordChangedAt ?? now }]),
    ]);
    if (history.length > 0) {
      await db.execute(sql`
        insert into signon.password_history (user_uid, password_hash, created_at)
        select * from unnest(${array(history.map((entry) => entry.uid))}::uuid[], ${array(history.map((entry) => entry.hash))}::text[], ${array(history.map((entry) => entry.at))}::timestamptz[])`);
    }
    for (const row of batch) written.push({ key: row.key, fingerprint: row.fingerprint, target: row.uid });
  }

  // 2-step secrets, sealed as Sign-on's own (a new person's went in with their row).
  for (const batch of batches([...secrets.fresh, ...secrets.changed].filter((row) => imported(row.uid)))) {
    const existing = batch.filter((row) => !inserted.has(row.uid));
    if (existing.length > 0) {
      await db.execute(sql`
        update signon.users u set otp_secret_encrypted = s.sealed, otp_enabled_at = s.enabled_at, last_otp_step = null
        from unnest(${array(existing.map((row) => row.uid))}::uuid[], ${array(existing.map((row) => row.sealed))}::text[],
          ${array(existing.map((row) => row.enabledAt))}::timestamptz[]) as s(uid, sealed, enabled_at)
        where u.uid = s.uid`);
    }
    for (const row of batch) written.push({ key: row.key, fingerprint: row.fingerprint, target: row.uid });
  }
  // A secret Signon no longer has (2-step reset there): reset here too. One Signon still has but this run could not
  // open (no keys given, a key missing) is left as an earlier run brought it.
  const unopened = new Set(data.unopenedTwoStepKeys);
  secrets.gone = secrets.gone.filter((key) => !unopened.has(key));
  const secretsGone = secrets.gone.map((key) => ledger.get(key)!.target);
  if (secretsGone.length > 0) {
    await db.execute(sql`update signon.users set otp_secret_encrypted = null, otp_enabled_at = null, last_otp_step = null where uid = any(${array(secretsGone)}::uuid[])`);
  }
  counts.twoStepSecrets.removed = secretsGone.length;
  for (const key of secrets.gone) taken.push(key);

  // Permissions: written by applyPermissions, batch by batch, once the rest is in.
  const applicationOf = (key: string) => (refusedApplications.has(key) ? undefined : applicationIds.get(key));

  // Tokens: each a grant of its own (an API user's `issued`, otherwise the sign-in flow's, its code long used).
  const tokens = plan("tokens", "token:", data.tokens.filter((row) => imported(row.uid) && applicationOf(row.applicationKey) !== undefined));
  for (const batch of batches(tokens.fresh)) {
    const grantIds = batch.map(() => randomUUID());
    await db.execute(sql`
      insert into signon.grants (id, kind, user_uid, application_id, code_used_at, created_at)
      select id, case when issued then 'issued' else 'authorization_code' end, uid, application_id, case when issued then null else created_at end, created_at
      from unnest(${array(grantIds)}::uuid[], ${array(batch.map((row) => row.issued))}::boolean[], ${array(batch.map((row) => row.uid))}::uuid[],
        ${array(batch.map((row) => applicationOf(row.applicationKey)))}::uuid[], ${array(batch.map((row) => row.createdAt))}::timestamptz[])
        as g(id, issued, uid, application_id, created_at)`);
    await db.execute(sql`
      insert into signon.access_tokens (token_hash, grant_id, user_uid, application_id, expires_at, created_at)
      select * from unnest(${array(batch.map((row) => row.tokenHash))}::text[], ${array(grantIds)}::uuid[], ${array(batch.map((row) => row.uid))}::uuid[],
        ${array(batch.map((row) => applicationOf(row.applicationKey)))}::uuid[], ${array(batch.map((row) => row.expiresAt))}::timestamptz[],
        ${array(batch.map((row) => row.createdAt))}::timestamptz[])
      on conflict (token_hash) do nothing`);
    const refreshing = batch.map((row, index) => ({ row, grantId: grantIds[index]! })).filter(({ row }) => row.refreshTokenHash !== null);
    if (refreshing.length > 0) {
      await db.execute(sql`
        insert into signon.refresh_tokens (token_hash, grant_id, created_at)
        select * from unnest(${array(refreshing.map(({ row }) => row.refreshTokenHash))}::text[], ${array(refreshing.map(({ grantId }) => grantId))}::uuid[],
          ${array(refreshing.map(({ row }) => row.createdAt))}::timestamptz[])
        on conflict (token_hash) do nothing`);
    }
    for (const row of batch) written.push({ key: row.key, fingerprint: row.fingerprint, target: row.tokenHash });
  }
  // A token revoked (or expired) in Signon since the last run is revoked here.
  const tokensGone = tokens.gone.map((key) => ledger.get(key)!.target);
  for (const chunk of batches(tokensGone)) {
    // Each imported token has a grant of its own: revoking it refuses its refresh token too.
    await db.execute(sql`
      update signon.grants set revoked_at = ${now}
      where id in (select grant_id from signon.access_tokens where token_hash = any(${array(chunk)}::text[])) and revoked_at is null`);
    await db.execute(sql`update signon.access_tokens set revoked_at = ${now} where token_hash = any(${array(chunk)}::text[]) and revoked_at is null`);
  }
  counts.tokens.removed = tokensGone.length;
  counts.tokens.unchanged += tokens.changed.length;
  counts.tokens.updated = 0;
  for (const key of tokens.gone) taken.push(key);

  for (const batch of batches(written)) {
    await db.execute(sql`
      insert into signon.signon_import_ledger (key, fingerprint, target, imported_at)
      select key, fingerprint, target, ${now}::timestamptz
      from unnest(${array(batch.map((entry) => entry.key))}::text[], ${array(batch.map((entry) => entry.fingerprint))}::text[], ${array(batch.map((entry) => entry.target))}::text[])
        as l(key, fingerprint, target)
      on conflict (key) do update set fingerprint = excluded.fingerprint, target = excluded.target, imported_at = excluded.imported_at`);
  }
  for (const batch of batches(taken)) await db.execute(sql`delete from signon.signon_import_ledger where key = any(${array(batch)}::text[])`);
  for (const key of refusedApplications) applicationIds.delete(key);
  const kept = new Set([...importedUids].filter((uid) => !refusedUids.has(uid)));
  return { counts, applicationIds, importedUids: kept };
}

/**
 * Writes Signon's permissions, streamed in batches ordered by person: the
 * ledger keeps one row per person (`permissions:<uid>`) with a fingerprint of
 * their whole set and the set itself, so that a later run rewrites only the
 * people whose set changed (granting what is new, removing what Signon took
 * away), and a million permissions are never held in memory at once.
 */
export async function applyPermissions(
  db: SignonDatabase,
  batches: AsyncIterable<PermissionRow[]>,
  applicationIds: Map<string, string>,
  importedUids: Set<string>,
  now: Date,
): Promise<KindCounts> {
  const counts: KindCounts = { created: 0, updated: 0, unchanged: 0, removed: 0 };
  const known = new Map<string, string>();
  const { rows } = (await db.execute(sql`select key, fingerprint from signon.signon_import_ledger where key like 'permissions:%'`)) as unknown as Rows<{ key: string; fingerprint: string }>;
  for (const row of rows) known.set(row.key, row.fingerprint);
  const seen = new Set<string>();
  let changed: PersonPermissions[] = [];
  const flush = async () => {
    if (changed.length > 0) await writePermissionSets(db, changed, counts, now);
    changed = [];
  };
  let current: { uid: string; rows: PermissionRow[] } | null = null;
  const finish = async (person: { uid: string; rows: PermissionRow[] }) => {
    const key = `permissions:${person.uid}`;
    seen.add(key);
    const items = new Map<string, Date | null>();
    for (const row of person.rows) {
      const item = `${applicationIds.get(row.applicationKey)!}|${row.permission}`;
      const synced = items.get(item) ?? null;
      items.set(item, synced === null || (row.lastSyncedAt !== null && row.lastSyncedAt > synced) ? row.lastSyncedAt : synced);
    }
    const set = [...items.keys()].sort();
    const fingerprint = createHash("sha256").update(set.join("\n")).digest("base64url").slice(0, 22);
    if (known.get(key) === fingerprint) {
      counts.unchanged += set.length;
      return;
    }
    changed.push({ uid: person.uid, key, fingerprint, items });
    if (changed.length >= batchSize / 5) await flush();
  };
  for await (const batch of batches) {
    for (const row of batch) {
      if (!importedUids.has(row.uid) || !applicationIds.has(row.applicationKey)) continue;
      if (current === null || current.uid !== row.uid) {
        if (current !== null) await finish(current);
        current = { uid: row.uid, rows: [] };
      }
      current.rows.push(row);
    }
  }
  if (current !== null) await finish(current);
  // People whose every permission Signon took away since the last run (or who are gone from it).
  for (const key of known.keys()) if (!seen.has(key)) changed.push({ uid: key.slice("permissions:".length), key, fingerprint: "", items: new Map() });
  await flush();
  return counts;
}

interface PersonPermissions {
  uid: string;
  key: string;
  /** Empty when the person has none left in Signon (their ledger row goes). */
  fingerprint: string;
  /** "application id|permission" → when the application last heard of it. */
  items: Map<string, Date | null>;
}

/** Brings the permissions of people whose set changed in line with Signon's, and the ledger with them. */
async function writePermissionSets(db: SignonDatabase, people: PersonPermissions[], counts: KindCounts, now: Date): Promise<void> {
  const { rows } = (await db.execute(sql`select key, target from signon.signon_import_ledger where key = any(${array(people.map((person) => person.key))}::text[])`)) as unknown as Rows<{
    key: string;
    target: string;
  }>;
  const before = new Map(rows.map((row) => [row.key, new Set(row.target === "" ? [] : row.target.split("\n"))]));
  const added: { uid: string; application: string; permission: string; synced: Date | null }[] = [];
  const removed: { uid: string; application: string; permission: string }[] = [];
  const split = (item: string) => ({ application: item.slice(0, 36), permission: item.slice(37) });
  for (const person of people) {
    const old = before.get(person.key) ?? new Set<string>();
    for (const [item, synced] of person.items) {
      if (old.has(item)) counts.unchanged += 1;
      else added.push({ uid: person.uid, ...split(item), synced });
    }
    for (const item of old) if (!person.items.has(item)) removed.push({ uid: person.uid, ...split(item) });
  }
  counts.created += added.length;
  counts.removed += removed.length;
  for (const chunk of batches(removed)) {
    await db.execute(sql`
      delete from signon.user_permissions p
      using unnest(${array(chunk.map((row) => row.uid))}::uuid[], ${array(chunk.map((row) => row.application))}::uuid[], ${array(chunk.map((row) => row.permission))}::text[])
        as gone(uid, application_id, permission)
      where p.user_uid = gone.uid and p.application_id = gone.application_id and p.permission = gone.permission`);
  }
  for (const chunk of batches(added)) {
    await db.execute(sql`
      insert into signon.user_permissions (user_uid, application_id, permission, created_at)
      select uid, application_id, permission, ${now}::timestamptz
      from unnest(${array(chunk.map((row) => row.uid))}::uuid[], ${array(chunk.map((row) => row.application))}::uuid[], ${array(chunk.map((row) => row.permission))}::text[])
        as p(uid, application_id, permission)
      on conflict do nothing`);
    const synced = chunk.filter((row) => row.synced !== null);
    if (synced.length > 0) {
      await db.execute(sql`
        insert into signon.user_application_syncs (user_uid, application_id, last_synced_at, last_synced_by)
        select uid, application_id, max(at), 'push'
        from unnest(${array(synced.map((row) => row.uid))}::uuid[], ${array(synced.map((row) => row.application))}::uuid[], ${array(synced.map((row) => row.synced))}::timestamptz[])
          as s(uid, application_id, at)
        group by uid, application_id
        on conflict (user_uid, application_id) do update set last_synced_at = greatest(signon.user_application_syncs.last_synced_at, excluded.last_synced_at)`);
    }
  }
  const kept = people.filter((person) => person.fingerprint !== "");
  if (kept.length > 0) {
    await db.execute(sql`
      insert into signon.signon_import_ledger (key, fingerprint, target, imported_at)
      select key, fingerprint, target, ${now}::timestamptz
      from unnest(${array(kept.map((person) => person.key))}::text[], ${array(kept.map((person) => person.fingerprint))}::text[],
        ${array(kept.map((person) => [...person.items.keys()].sort().join("\n")))}::text[]) as l(key, fingerprint, target)
      on conflict (key) do update set fingerprint = excluded.fingerprint, target = excluded.target, imported_at = excluded.imported_at`);
  }
  const gone = people.filter((person) => person.fingerprint === "").map((person) => person.key);
  if (gone.length > 0) await db.execute(sql`delete from signon.signon_import_ledger where key = any(${array(gone)}::text[])`);
}

/** An organisation here with the row's content id, or else its slug. */
async function existingOrganisation(db: SignonDatabase, row: OrganisationRow): Promise<string | null> {
  const { rows } = (await db.execute(sql`
    select id from signon.organisations where content_id = ${row.contentId}
    union all select id from signon.organisations where slug = ${row.slug} limit 1`)) as unknown as Rows<{ id: string }>;
  return rows[0]?.id ?? null;
}


/** The id of the last Signon event an earlier run brought over, or 0. */
export async function lastImportedEvent(db: SignonDatabase): Promise<number> {
  const { rows } = (await db.execute(sql`select fingerprint from signon.signon_import_ledger where key = ${eventWatermarkKey}`)) as unknown as Rows<{ fingerprint: string }>;
  return rows[0] ? Number(rows[0].fingerprint) : 0;
}

export interface ImportedEvent {
  id: number;
  action: string;
  occurredAt: Date;
  actorUid: string | null;
  subjectUid: string | null;
  applicationId: string | null;
  ip: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
}

/** Appends a batch of Signon's events to the audit log, and moves the watermark past them. */
export async function appendEvents(db: SignonDatabase, events: ImportedEvent[], now: Date): Promise<void> {
  if (events.length === 0) return;
  await db.execute(sql`
    insert into signon.audit_events (action, occurred_at, actor_uid, subject_uid, application_id, ip, user_agent, details)
    select * from unnest(${array(events.map((event) => event.action))}::text[], ${array(events.map((event) => event.occurredAt))}::timestamptz[],
      ${array(events.map((event) => event.actorUid))}::uuid[], ${array(events.map((event) => event.subjectUid))}::uuid[],
      ${array(events.map((event) => event.applicationId))}::uuid[], ${array(events.map((event) => event.ip))}::inet[],
      ${array(events.map((event) => event.userAgent))}::text[], ${array(events.map((event) => JSON.stringify(event.details)))}::jsonb[])`);
  const last = String(events.at(-1)!.id);
  await db.execute(sql`
    insert into signon.signon_import_ledger (key, fingerprint, target, imported_at) values (${eventWatermarkKey}, ${last}, 'audit_events', ${now})
    on conflict (key) do update set fingerprint = excluded.fingerprint, imported_at = excluded.imported_at`);
}
