import { stringify } from "csv-stringify/sync";
import { neutraliseFormula } from "../accounts/users-csv.js";
import { isDatabaseUnavailable } from "@tessera/db";
import type { SignonContext } from "../context.js";
import type { SignonDatabase } from "../db/database.js";
import { keepMonthlyUsers, keptMonthlyUsers, listSignIns, monthlyUsers, type ApplicationSignIn, type MonthlyUsers } from "../repositories/application-usage.js";

/** How many months the monthly figures go back, this one included. */
export const usageMonths = 12;

/** The most sign-ins one CSV download holds (newest first). */
export const maxCsvSignIns = 100_000;

/** The first day (UTC) of the month `monthsBack` months before the one `now` is in. */
export function startOfMonth(now: Date, monthsBack: number): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsBack, 1));
}

/**
 * Monthly unique users of an application over the last `usageMonths` months,
 * every month listed (0 when nobody signed in), newest first. A person counts
 * once a month however often they sign in; sign-ins are the authorization
 * codes issued to them (`authorization_code_issued` audit events). Audit
 * events older than the retention period (`eventRetentionDays`) are pruned,
 * so months that ended before it are left out rather than shown as unused;
 * the oldest month listed may be counted in part.
 */
export async function applicationMonthlyUsers(ctx: SignonContext, applicationId: string, keepIn: SignonDatabase = ctx.db): Promise<MonthlyUsers[]> {
  const now = ctx.now();
  const keptSince = new Date(now.getTime() - ctx.config.eventRetentionDays * 86_400_000);
  const found = new Map((await monthFigures(ctx, applicationId, now, keepIn)).map((row) => [row.month, row]));
  return Array.from({ length: usageMonths }, (_, back) => back)
    .filter((back) => back === 0 || startOfMonth(now, back - 1) > keptSince)
    .map((back) => {
      const month = startOfMonth(now, back).toISOString().slice(0, 7);
      return found.get(month) ?? { month, users: 0, signIns: 0 };
    });
}

/** A month is settled, and its figures kept, once it ended this long ago: sign-ins being written as it ended are in. */
const settledAfterMs = 3_600_000;

/**
 * The figures of the last `usageMonths` months: those of settled months as kept (`application_usage_months`),
 * counted from the audit events and kept the first time they are asked for; the rest counted on each view. At a
 * million sign-ins a year, counting every month on each view took 400 ms; the month in progress alone is a
 * twelfth of that. `ctx` reads (a replica, perhaps); `keepIn` is the primary, where the figures are kept; a page
 * whose figures cannot be kept there now (the primary is out of reach) shows them all the same.
 */
async function monthFigures(ctx: SignonContext, applicationId: string, now: Date, keepIn: SignonDatabase): Promise<MonthlyUsers[]> {
  const since = startOfMonth(now, usageMonths - 1);
  const current = startOfMonth(now, 0);
  // The first month not yet settled: this one, or the one before in its first hour.
  const unsettled = now.getTime() - current.getTime() < settledAfterMs ? startOfMonth(now, 1) : current;
  const settledMonths = Array.from({ length: usageMonths }, (_, back) => startOfMonth(now, back)).filter((month) => month < unsettled);
  const kept = await keptMonthlyUsers(ctx.db, applicationId, since.toISOString().slice(0, 7));
  const keptMonths = new Set(kept.map((row) => row.month));
  const missing = settledMonths.filter((month) => !keptMonths.has(month.toISOString().slice(0, 7)));
  const counted: MonthlyUsers[] = [];
  if (missing.length > 0) {
    const oldest = missing.at(-1) as Date;
    const settled = await monthlyUsers(ctx.db, applicationId, oldest, unsettled);
    const byMonth = new Map(settled.map((row) => [row.month, row]));
    const figures = missing.map((month) => byMonth.get(month.toISOString().slice(0, 7)) ?? { month: month.toISOString().slice(0, 7), users: 0, signIns: 0 });
    await keepMonthlyUsers(keepIn, applicationId, figures).catch((error: unknown) => {
      if (!isDatabaseUnavailable(error)) throw error;
    });
    counted.push(...figures);
  }
  const live = await monthlyUsers(ctx.db, applicationId, unsettled);
  return [...live, ...kept, ...counted];
}

/** A page of an application's access log, newest first: `limit` sign-ins older than the event `before` (keyset), or the newest. */
export async function applicationSignIns(ctx: SignonContext, applicationId: string, page: { limit: number; before?: number | null | undefined }): Promise<ApplicationSignIn[]> {
  return listSignIns(ctx.db, applicationId, page);
}

/** The access log as CSV: `signed_in_at` (ISO 8601 UTC), `uid`, `name`, `email`, newest first, formulas neutralised. */
export async function applicationSignInsCsv(ctx: SignonContext, applicationId: string): Promise<string> {
  const rows = await listSignIns(ctx.db, applicationId, { limit: maxCsvSignIns });
  return stringify([
    ["signed_in_at", "uid", "name", "email"],
    ...rows.map((row) => [row.at.toISOString(), row.uid ?? "", row.name ?? "", row.email ?? ""].map(neutraliseFormula)),
  ]);
}
