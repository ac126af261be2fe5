import { sql } from "drizzle-orm";
import type { SignonContext } from "../../src/context.js";

async function rows<T>(ctx: SignonContext, text: string): Promise<T[]> {
  return (await ctx.db.execute(sql.raw(text))).rows as unknown as T[];
}

async function digestOf(ctx: SignonContext, tables: readonly string[]): Promise<string> {
  const parts = tables.map((table) => `(select coalesce(string_agg(t::text, ',' order by t::text), '') from ${table})`);
  return (await rows<{ digest: string }>(ctx, `select md5(concat_ws('|', ${parts.join(", ")})) as digest`))[0]!.digest;
}

/**
 * Digests of what Sign-on stores, so a test can tell that a refused request
 * wrote nothing. `accounts`: people, organisations, applications,
 * permissions, passwords, account links, pushes and settings; `tokens`:
 * grants, access and refresh tokens. Left out: what a refusal records on
 * purpose (failed attempts, locks, audit events, failure counters) and what
 * showing a page writes (sessions, the development mailbox, and the pending
 * 2-step secret that the set-up page, shown again after a wrong code, creates).
 */
export async function storedStateDigest(ctx: SignonContext): Promise<{ accounts: string; tokens: string }> {
  return {
    accounts: await digestOf(ctx, [
      "(select uid, name, email, role, is_api_user, organisation_id, password_hash, suspended_at, suspension_reason, otp_enabled_at, password_changed_at from signon.users) t",
      "signon.organisations t",
      "signon.applications t",
      "signon.user_permissions t",
      "signon.password_history t",
      "signon.account_links t",
      "signon.remembered_browsers t",
      "(select id, user_uid, application_id, kind, seq, status from signon.push_deliveries) t",
      "signon.settings t",
    ]),
    tokens: await digestOf(ctx, ["signon.grants t", "signon.access_tokens t", "signon.refresh_tokens t"]),
  };
}

/** The highest audit event id so far (0 for none). */
export async function lastAuditEventId(ctx: SignonContext): Promise<number> {
  return Number((await rows<{ id: string | null }>(ctx, "select max(id) as id from signon.audit_events"))[0]?.id ?? 0);
}

/** The actions of the audit events written after `id`. */
export async function auditActionsAfter(ctx: SignonContext, id: number): Promise<string[]> {
  return (await rows<{ action: string }>(ctx, `select action from signon.audit_events where id > ${Number(id)} order by id`)).map((row) => row.action);
}

/** What a refused request may record: failed attempts, locks and the revocation of a replayed code's or refresh token's family. */
export const REFUSAL_AUDIT_ACTIONS = new Set([
  "sign_in_failed",
  "sign_in_refused",
  "account_locked",
  "client_authentication_failed",
  "two_step_failed",
  "authorization_code_replayed",
  "refresh_token_reused",
  "upstream_sign_in_refused",
]);

/** What existed before the run: rows the scenario made without audit events. */
export interface InitialRows {
  readonly users: ReadonlySet<string>;
  readonly applications: ReadonlySet<string>;
}

export async function initialRows(ctx: SignonContext): Promise<InitialRows> {
  return {
    users: new Set((await rows<{ uid: string }>(ctx, "select uid from signon.users")).map((row) => row.uid)),
    applications: new Set((await rows<{ id: string }>(ctx, "select id from signon.applications")).map((row) => row.id)),
  };
}

/**
 * Where stored data and the audit log disagree: a user or application created
 * during the run without its creation event, a suspended user without a
 * suspension event, a retired application without its event, a held
 * permission its application does not support, a delegatable permission that
 * is not supported, a grant of a retired or unknown pairing with live tokens.
 */
export async function inconsistencies(ctx: SignonContext, before: InitialRows): Promise<string[]> {
  const problems: string[] = [];
  const eventsBySubject = new Map<string, Set<string>>();
  for (const row of await rows<{ subject_uid: string | null; application_id: string | null; action: string }>(
    ctx,
    "select subject_uid, application_id, action from signon.audit_events",
  )) {
    for (const key of [row.subject_uid, row.application_id]) {
      if (key === null) continue;
      if (!eventsBySubject.has(key)) eventsBySubject.set(key, new Set());
      eventsBySubject.get(key)!.add(row.action);
    }
  }
  const has = (key: string, ...actions: string[]) => actions.some((action) => eventsBySubject.get(key)?.has(action));

  for (const user of await rows<{ uid: string; email: string; suspended_at: Date | null }>(ctx, "select uid, email, suspended_at from signon.users")) {
    if (!before.users.has(user.uid) && !has(user.uid, "user_created", "user_invited", "api_user_created")) problems.push(`user ${user.email} has no creation event`);
    if (user.suspended_at !== null && !has(user.uid, "user_suspended", "suspended_for_inactivity")) problems.push(`user ${user.email} is suspended without a suspension event`);
  }
  for (const application of await rows<{ id: string; name: string; retired: boolean; supported_permissions: string[]; delegatable_permissions: string[] }>(
    ctx,
    "select id, name, retired, supported_permissions, delegatable_permissions from signon.applications",
  )) {
    if (!before.applications.has(application.id) && !has(application.id, "application_created")) problems.push(`application ${application.name} has no creation event`);
    if (application.retired && !has(application.id, "application_retired")) problems.push(`application ${application.name} is retired without an event`);
    const supported = new Set(application.supported_permissions);
    for (const permission of application.delegatable_permissions) {
      if (!supported.has(permission)) problems.push(`application ${application.name} delegates ${permission}, which it does not support`);
    }
  }
  for (const row of await rows<{ email: string; name: string; permission: string }>(
    ctx,
    `select u.email, a.name, p.permission from signon.user_permissions p join signon.users u on u.uid = p.user_uid join signon.applications a on a.id = p.application_id
     where not (p.permission = any(a.supported_permissions))`,
  )) {
    problems.push(`${row.email} holds ${row.permission} on ${row.name}, which it does not support`);
  }
  for (const row of await rows<{ token_hash: string }>(
    ctx,
    `select t.token_hash from signon.access_tokens t join signon.grants g on g.id = t.grant_id
     where t.revoked_at is null and g.revoked_at is not null`,
  )) {
    problems.push(`access token ${row.token_hash.slice(0, 8)}… is live in a revoked grant`);
  }
  return problems;
}
