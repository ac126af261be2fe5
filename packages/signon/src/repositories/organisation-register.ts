import { eq, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { settings } from "../db/schema.js";

/** The `settings` row that holds the organisation register's state, shared by every instance. */
const stateKey = "organisation_register";

/** What the last fetch that succeeded found and changed. */
export interface RegisterFetchSummary {
  pages: number;
  organisations: number;
  created: number;
  updated: number;
  unchanged: number;
}

/** The organisation register's state, as every instance sees it. */
export interface RegisterState {
  lastAttemptAt: Date | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  /** Why the last fetch failed, while it is the latest outcome; `null` once one succeeds. */
  lastError: string | null;
  lastSummary: RegisterFetchSummary | null;
  /** Fetches that failed, ever. */
  failures: number;
  /** Fetches that failed since the last one that succeeded. */
  consecutiveFailures: number;
  /** A fetch holds the lease until then (`null`: none does). */
  leaseUntil: Date | null;
}

/** The state as the row stores it (JSON: times as ISO strings). */
interface StoredState {
  lease_token?: string;
  lease_until?: string;
  last_attempt_at?: string;
  last_success_at?: string;
  last_failure_at?: string;
  last_error?: string | null;
  last_summary?: RegisterFetchSummary;
  failures?: number;
  consecutive_failures?: number;
}

const dateOf = (value: string | undefined): Date | null => (value === undefined ? null : new Date(value));

/** The register's state; all empty before the first fetch. */
export async function readRegisterState(db: SignonDatabase): Promise<RegisterState> {
  const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, stateKey)).limit(1);
  const stored = (row?.value ?? {}) as StoredState;
  return {
    lastAttemptAt: dateOf(stored.last_attempt_at),
    lastSuccessAt: dateOf(stored.last_success_at),
    lastFailureAt: dateOf(stored.last_failure_at),
    lastError: stored.last_error ?? null,
    lastSummary: stored.last_summary ?? null,
    failures: stored.failures ?? 0,
    consecutiveFailures: stored.consecutive_failures ?? 0,
    leaseUntil: dateOf(stored.lease_until),
  };
}

/**
 * Takes the lease of a fetch for `claim.token` until `claim.leaseUntil`, when
 * no other fetch holds one and, unless `claim.due` is `null`, when a fetch is
 * due: the last success (if any) at or before `due.successBefore` and the
 * last attempt (if any) at or before `due.attemptBefore`. One statement on
 * one row: of instances claiming at once, one gets it. Returns whether it
 * did.
 */
export async function claimRegisterFetch(
  db: SignonDatabase,
  claim: { token: string; now: Date; leaseUntil: Date; due: { successBefore: Date; attemptBefore: Date } | null },
): Promise<boolean> {
  const taken = { lease_token: claim.token, lease_until: claim.leaseUntil.toISOString(), last_attempt_at: claim.now.toISOString() };
  const due =
    claim.due === null
      ? sql`true`
      : sql`coalesce((state.value->>'last_success_at')::timestamptz <= ${claim.due.successBefore.toISOString()}::timestamptz, true)
            and coalesce((state.value->>'last_attempt_at')::timestamptz <= ${claim.due.attemptBefore.toISOString()}::timestamptz, true)`;
  const result = await db.execute(sql`
    insert into ${settings} as state (key, value, updated_at)
    values (${stateKey}, ${JSON.stringify(taken)}::jsonb, ${claim.now.toISOString()}::timestamptz)
    on conflict (key) do update set value = state.value || excluded.value, updated_at = excluded.updated_at
    where coalesce((state.value->>'lease_until')::timestamptz <= ${claim.now.toISOString()}::timestamptz, true) and ${due}
    returning key`);
  return result.rows.length === 1;
}

/** Records a fetch that succeeded and ends its lease. */
export async function recordRegisterSuccess(db: SignonDatabase, token: string, now: Date, summary: RegisterFetchSummary): Promise<void> {
  const patch = { last_success_at: now.toISOString(), last_error: null, consecutive_failures: 0, last_summary: summary };
  await db.execute(sql`
    update ${settings} set value = ${withoutLease(token)} || ${JSON.stringify(patch)}::jsonb, updated_at = ${now.toISOString()}::timestamptz
    where key = ${stateKey}`);
}

/** Records a fetch that failed, and why, and ends its lease. */
export async function recordRegisterFailure(db: SignonDatabase, token: string, now: Date, error: string): Promise<void> {
  await db.execute(sql`
    update ${settings}
    set value = ${withoutLease(token)} || jsonb_build_object(
          'last_failure_at', ${now.toISOString()}::text,
          'last_error', ${error}::text,
          'failures', coalesce((value->>'failures')::bigint, 0) + 1,
          'consecutive_failures', coalesce((value->>'consecutive_failures')::bigint, 0) + 1),
        updated_at = ${now.toISOString()}::timestamptz
    where key = ${stateKey}`);
}

/** Moves the end of a fetch's lease to `until`, if `token` still holds it; returns whether it did. */
export async function extendRegisterLease(db: SignonDatabase, token: string, until: Date): Promise<boolean> {
  const result = await db.execute(sql`
    update ${settings} set value = value || jsonb_build_object('lease_until', ${until.toISOString()}::text)
    where key = ${stateKey} and value->>'lease_token' = ${token}
    returning key`);
  return result.rows.length === 1;
}

/** Ends a fetch's lease without recording an outcome (Sign-on stopped during it). */
export async function releaseRegisterLease(db: SignonDatabase, token: string): Promise<void> {
  await db.execute(sql`update ${settings} set value = ${withoutLease(token)} where key = ${stateKey}`);
}

/** The stored value without the lease, when `token` still holds it (a fetch that outlived its lease leaves the next one's alone). */
function withoutLease(token: string) {
  return sql`(case when value->>'lease_token' = ${token} then value - 'lease_token' - 'lease_until' else value end)`;
}
