import { stringify } from "csv-stringify/sync";
import { neutraliseFormula } from "../accounts/users-csv.js";
import type { SignonContext } from "../context.js";
import { listSignIns, monthlyUsers, type ApplicationSignIn, type MonthlyUsers } from "../repositories/application-usage.js";

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
export async function applicationMonthlyUsers(ctx: SignonContext, applicationId: string): Promise<MonthlyUsers[]> {
  const now = ctx.now();
  const keptSince = new Date(now.getTime() - ctx.config.eventRetentionDays * 86_400_000);
  const found = new Map((await monthlyUsers(ctx.db, applicationId, startOfMonth(now, usageMonths - 1))).map((row) => [row.month, row]));
  return Array.from({ length: usageMonths }, (_, back) => back)
    .filter((back) => back === 0 || startOfMonth(now, back - 1) > keptSince)
    .map((back) => {
      const month = startOfMonth(now, back).toISOString().slice(0, 7);
      return found.get(month) ?? { month, users: 0, signIns: 0 };
    });
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
