import { randomUUID } from "node:crypto";
import type { SignonContext } from "../../context.js";
import {
  claimRegisterFetch,
  extendRegisterLease,
  readRegisterState,
  recordRegisterFailure,
  releaseRegisterLease,
  recordRegisterSuccess,
  type RegisterFetchSummary,
} from "../../repositories/organisation-register.js";
import { importOrganisations, type ImportOutcome } from "../import-organisations.js";
import { AccountError } from "../manage-users.js";
import { readOrganisationImportList } from "../organisation-import-file.js";
import { fetchRegisterPages, RegisterFetchError, type PlacedEntry } from "./fetch-register-pages.js";

/** What became of one organisation of the feed. */
export interface RegisterRowResult {
  slug: string | null;
  page: number;
  item: number;
  outcome: ImportOutcome;
  message?: string;
}

/** What a call of {@link fetchOrganisationRegister} did. */
export type RegisterFetchOutcome =
  | ({ status: "fetched"; register: string; results: RegisterRowResult[] } & RegisterFetchSummary)
  /** Nothing changed; `invalid` lists the organisations that stopped it, when it was them. */
  | { status: "failed"; register: string; error: string; invalid: RegisterRowResult[] }
  /** Another fetch (another instance, or the command line) holds the lease. */
  | { status: "busy"; register: string }
  /** The last fetch was too recent (only when not forced). */
  | { status: "not_due"; register: string }
  /** Sign-on stopped during the fetch, which changed nothing and counts as no attempt. */
  | { status: "stopped"; register: string };

/** Where a fetch reports: a line when one succeeds, and one when one fails. */
export interface RegisterLog {
  info(message: string): void;
  error(message: string): void;
}

/**
 * How long a fetch's lease lasts from its start and from each page it asks
 * for: the page's timeout twice over, plus five minutes for the apply. A
 * fetch that dies leaves the next one waiting no longer than that.
 */
const leaseMs = (pageTimeoutMs: number) => 2 * pageTimeoutMs + 300_000;

/** Another fetch took the lease over (this one outlived it). */
class LeaseLost extends Error {}

/** Invalid organisations named in one failure message; the rest are counted. */
const namedInMessage = 5;

/**
 * The register's address as logs and pages show it: its origin and path,
 * without the query, which could carry a key.
 */
export function registerForDisplay(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/**
 * Fetches the organisation register (`config.organisationRegister`) and
 * applies it: every page is fetched and read first, then every organisation
 * is created or updated in one transaction by the organisation import
 * (`importOrganisations`, as the register's source: matched by content id,
 * then slug), and nothing is deleted. A page that cannot be fetched or read,
 * or any organisation that cannot be applied (a parent that exists nowhere, a
 * loop of parents, a slug twice), fails the whole fetch, which then changes
 * nothing. Either way the outcome is recorded (the shared state behind the
 * metrics and the organisations page) and logged; what a fetch changed is in
 * the audit events (`organisation_register_fetched` and one per organisation).
 *
 * One fetch runs at a time across instances: it holds a lease in the
 * database, renewed as it asks for each page. Unless `force` (the command line),
 * it runs only when due: `due.intervalMs` after the last success (default
 * the configured interval), and no sooner than `due.retryMs` after the last
 * attempt (default 0). A failure other than the register's (the database's)
 * is recorded as a failed fetch when it can be, and thrown.
 */
export async function fetchOrganisationRegister(
  ctx: SignonContext,
  options: { fetch?: typeof fetch; force: boolean; due?: { intervalMs: number; retryMs: number }; log?: RegisterLog; signal?: AbortSignal },
): Promise<RegisterFetchOutcome> {
  const config = ctx.config.organisationRegister;
  if (config.url === null) throw new AccountError("No organisation register is configured: set SIGNON_ORGANISATION_REGISTER_URL");
  const register = registerForDisplay(config.url);
  const token = randomUUID();
  const started = ctx.now();
  const leaseUntil = new Date(started.getTime() + leaseMs(config.pageTimeoutMs));
  const due = options.due ?? { intervalMs: config.intervalMs, retryMs: 0 };
  const claimed = await claimRegisterFetch(ctx.db, {
    token,
    now: started,
    leaseUntil,
    due: options.force ? null : { successBefore: new Date(started.getTime() - due.intervalMs), attemptBefore: new Date(started.getTime() - due.retryMs) },
  });
  if (!claimed) {
    // Forced, only another fetch's lease stops it; otherwise that or the schedule.
    return options.force || (await fetchInProgress(ctx)) ? { status: "busy", register } : { status: "not_due", register };
  }

  try {
    return await fetchAndApply(ctx, { ...options, url: config.url, register, token });
  } catch (error) {
    // Recorded and its lease ended if the database still answers; the job logs it.
    await recordRegisterFailure(ctx.db, token, ctx.now(), `stopped by an error: ${(error as Error).message}`.slice(0, 500)).catch(() => undefined);
    throw error;
  }
}

/** Fetches every page, then applies them all or nothing; records and logs the outcome. */
async function fetchAndApply(
  ctx: SignonContext,
  options: { fetch?: typeof fetch; log?: RegisterLog; signal?: AbortSignal; url: string; register: string; token: string },
): Promise<RegisterFetchOutcome> {
  const { register, token } = options;
  const fail = async (error: string, invalid: RegisterRowResult[] = []): Promise<RegisterFetchOutcome> => {
    await recordRegisterFailure(ctx.db, token, ctx.now(), error);
    options.log?.error(`Organisation register ${register}: the fetch failed and changed nothing: ${error}`);
    return { status: "failed", register, error, invalid };
  };

  const pageTimeoutMs = ctx.config.organisationRegister.pageTimeoutMs;
  const beforePage = async () => {
    if (!(await extendRegisterLease(ctx.db, token, new Date(ctx.now().getTime() + leaseMs(pageTimeoutMs))))) throw new LeaseLost();
  };
  let fetched: { pages: number; entries: PlacedEntry[] };
  try {
    fetched = await fetchRegisterPages(options.url, { ...ctx.config.organisationRegister, fetch: options.fetch ?? globalThis.fetch, signal: options.signal, beforePage });
  } catch (error) {
    if (error instanceof LeaseLost) return { status: "busy", register };
    if (options.signal?.aborted === true) {
      await releaseRegisterLease(ctx.db, token);
      return { status: "stopped", register };
    }
    if (error instanceof RegisterFetchError) return fail(error.message);
    throw error;
  }

  let read: ReturnType<typeof readOrganisationImportList>;
  try {
    read = readOrganisationImportList(fetched.entries.map((placed) => placed.entry));
  } catch (error) {
    if (error instanceof AccountError) return fail(error.message);
    throw error;
  }
  // The import numbers rows from 1 in feed order: row n is the feed's n-th organisation.
  const place = (row: number) => fetched.entries[row - 1] ?? { page: 0, item: 0 };
  const placed = (result: { row: number; slug: string | null; outcome: ImportOutcome; message?: string | undefined }): RegisterRowResult => ({
    slug: result.slug,
    page: place(result.row).page,
    item: place(result.row).item,
    outcome: result.outcome,
    ...(result.message === undefined ? {} : { message: result.message }),
  });
  if (read.unreadable.length > 0) {
    const invalid = read.unreadable.map((row) => placed({ ...row, outcome: "invalid" }));
    return fail(invalidMessage(invalid), invalid);
  }

  const results = (
    await importOrganisations(ctx, read.rows, [], {
      dryRun: false,
      allOrNothing: true,
      source: "register",
      event: { action: "organisation_register_fetched", details: { register, pages: fetched.pages, organisations: read.rows.length } },
    })
  ).map(placed);
  const invalid = results.filter((result) => result.outcome === "invalid");
  if (invalid.length > 0) return fail(invalidMessage(invalid), invalid);

  const count = (outcome: ImportOutcome) => results.filter((result) => result.outcome === outcome).length;
  const summary: RegisterFetchSummary = { pages: fetched.pages, organisations: results.length, created: count("created"), updated: count("updated"), unchanged: count("unchanged") };
  await recordRegisterSuccess(ctx.db, token, ctx.now(), summary);
  options.log?.info(
    `Organisation register ${register}: fetched ${summary.organisations} organisation(s) on ${summary.pages} page(s): ` +
      `created ${summary.created}, updated ${summary.updated}, ${summary.unchanged} unchanged`,
  );
  return { status: "fetched", register, results, ...summary };
}

/** Whether a fetch holds the lease now. */
async function fetchInProgress(ctx: SignonContext): Promise<boolean> {
  const state = await readRegisterState(ctx.db);
  return state.leaseUntil !== null && state.leaseUntil > ctx.now();
}

/** The invalid organisations that stopped a fetch, the first few by name, where they are in the feed and why. */
function invalidMessage(invalid: readonly RegisterRowResult[]): string {
  const named = invalid
    .slice(0, namedInMessage)
    .map((result) => `${result.slug ?? "(no slug)"} (page ${result.page}, item ${result.item}): ${result.message ?? "invalid"}`);
  const more = invalid.length > namedInMessage ? `; and ${invalid.length - namedInMessage} more` : "";
  return `${invalid.length} organisation(s) cannot be applied: ${named.join("; ")}${more}`;
}
