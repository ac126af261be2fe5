import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";

/** One sign-in to an application: an authorization code issued to a person (`authorization_code_issued`). */
export interface ApplicationSignIn {
  /** The audit event's id: the key of the "Older sign-ins" link. */
  id: number;
  at: Date;
  uid: string | null;
  name: string | null;
  email: string | null;
}

/** How many different people signed in to an application in one calendar month (UTC). */
export interface MonthlyUsers {
  /** `YYYY-MM`. */
  month: string;
  users: number;
  signIns: number;
}

/** The sign-ins to an application, newest first, from the audit events. */
export async function listSignIns(db: SignonDatabase, applicationId: string, page: { limit: number; before?: number | null | undefined }): Promise<ApplicationSignIn[]> {
  // Keyset: older than the event `before` (its time, then its id), through audit_events_sign_in_idx.
  const older = page.before === undefined || page.before === null ? sql`` : sql`and (e.occurred_at, e.id) < (select b.occurred_at, b.id from signon.audit_events b where b.id = ${page.before})`;
  const result = await db.execute<{ id: string | number; occurred_at: Date | string; subject_uid: string | null; name: string | null; email: string | null }>(sql`
    select e.id, e.occurred_at, e.subject_uid, u.name, u.email
      from signon.audit_events e
      left join signon.users u on u.uid = e.subject_uid
     where e.application_id = ${applicationId}::uuid and e.action = 'authorization_code_issued' ${older}
     order by e.occurred_at desc, e.id desc
     limit ${page.limit}`);
  return result.rows.map((row) => ({ id: Number(row.id), at: new Date(row.occurred_at), uid: row.subject_uid, name: row.name, email: row.email }));
}

/** Different people and sign-ins per calendar month (UTC) from `since` to before `until`, newest month first; months without any are left out. */
export async function monthlyUsers(db: SignonDatabase, applicationId: string, since: Date, until: Date | null = null): Promise<MonthlyUsers[]> {
  const before = until === null ? sql`` : sql`and e.occurred_at < ${until.toISOString()}::timestamptz`;
  const result = await db.execute<{ month: string; users: number; sign_ins: number }>(sql`
    select to_char(date_trunc('month', e.occurred_at at time zone 'UTC'), 'YYYY-MM') as month,
           count(distinct e.subject_uid)::int as users, count(*)::int as sign_ins
      from signon.audit_events e
     where e.application_id = ${applicationId}::uuid and e.action = 'authorization_code_issued'
       and e.occurred_at >= ${since.toISOString()}::timestamptz ${before}
     group by 1
     order by 1 desc`);
  return result.rows.map((row) => ({ month: row.month, users: row.users, signIns: row.sign_ins }));
}

/** The kept figures of months that have ended (`application_usage_months`), from the month `since` on. */
export async function keptMonthlyUsers(db: SignonDatabase, applicationId: string, sinceMonth: string): Promise<MonthlyUsers[]> {
  const result = await db.execute<{ month: string; users: number; sign_ins: number }>(sql`
    select month, users, sign_ins from signon.application_usage_months
     where application_id = ${applicationId}::uuid and month >= ${sinceMonth}
     order by month desc`);
  return result.rows.map((row) => ({ month: row.month, users: row.users, signIns: row.sign_ins }));
}

/** Keeps the figures of months that have ended; a month kept already stays as it was (another view kept it first). */
export async function keepMonthlyUsers(db: SignonDatabase, applicationId: string, months: readonly MonthlyUsers[]): Promise<void> {
  if (months.length === 0) return;
  await db.execute(sql`
    insert into signon.application_usage_months (application_id, month, users, sign_ins)
    select ${applicationId}::uuid, month, users, sign_ins
      from unnest(${`{${months.map((row) => row.month).join(",")}}`}::text[], ${`{${months.map((row) => row.users).join(",")}}`}::int[],
                  ${`{${months.map((row) => row.signIns).join(",")}}`}::int[]) as kept(month, users, sign_ins)
    on conflict (application_id, month) do nothing`);
}
