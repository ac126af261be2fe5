// The users list's count: exact up to the limit whatever the estimate, past it an estimate from a sample of the
// table or "more than" the limit, and the sample's estimate when counting would take longer than its budget.
import { sql, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import type { SignonDatabase } from "../../src/db/database.js";
import { countUsers, sampleSettlesOver, type UserSearch } from "../../src/repositories/user-search.js";
import { useTestSignon } from "../support/signon.js";

const { database } = await useTestSignon();

/** The text of a query, to tell which one a stand-in database is asked. */
const sqlText = (query: unknown) => new PgDialect().sqlToQuery(query as SQL).sql.toLowerCase();

function search(text: string): UserSearch {
  return { scopeRoles: ["superadmin", "admin", "super_organisation_admin", "organisation_admin", "normal"], text, locksSetAfter: new Date(0), twoStepRules: { requiredRoles: [], now: new Date() } };
}

async function addPeople(prefix: string, count: number): Promise<void> {
  await database.db.execute(sql`
    insert into signon.users (uid, name, email, created_at, updated_at)
    select gen_random_uuid(), ${prefix} || ' ' || n, ${prefix} || n || '@count.test', now(), now() from generate_series(1, ${count}) n`);
}

describe("countUsers", () => {
  it("counts exactly up to the limit", async () => {
    await addPeople("Qqexact", 7);
    expect(await countUsers(database.db, search("qqexact"), 10)).toEqual({ count: 7, exact: true, moreThan: false, tooSlowToCount: false });
  });

  it("counts exactly when PostgreSQL's estimate is far over the limit but the truth is under it", async () => {
    await addPeople("Qqfew", 4);
    // Statistics that say a million people hold the text: the count still says 4, exactly.
    const misled = new Proxy(database.db, {
      get: (target, property, receiver) =>
        property === "execute"
          ? (query: Parameters<SignonDatabase["execute"]>[0]) =>
              sqlText(query).includes("explain") ? Promise.resolve({ rows: [{ "QUERY PLAN": [{ Plan: { "Plan Rows": 1_000_000 } }] }] }) : target.execute(query)
          : Reflect.get(target, property, receiver),
    }) as SignonDatabase;
    expect(await countUsers(misled, search("qqfew"), 10)).toEqual({ count: 4, exact: true, moreThan: false, tooSlowToCount: false });
  });

  it("past the limit, estimates from a sample of the table (all of a small one), or says more than the limit when the sample finds fewer", async () => {
    await addPeople("Qqmany", 30);
    expect(await countUsers(database.db, search("qqmany"), 10)).toEqual({ count: 30, exact: false, moreThan: false, tooSlowToCount: false });
    // A sample that finds fewer than the count proved: the count's bound, which is true, rather than the sample.
    const unlucky = new Proxy(database.db, {
      get: (target, property, receiver) =>
        property === "execute"
          ? (query: Parameters<SignonDatabase["execute"]>[0]) =>
              sqlText(query).includes("tablesample") ? Promise.resolve({ rows: [{ matches: 2, estimate: 2 }] }) : target.execute(query)
          : Reflect.get(target, property, receiver),
    }) as SignonDatabase;
    expect(await countUsers(unlucky, search("qqmany"), 10)).toEqual({ count: 10, exact: false, moreThan: true, tooSlowToCount: false });
  });

  it("answers a sample's estimate without counting when even its low end is over the limit", async () => {
    await addPeople("Qqsampled", 3);
    let counts = 0;
    // A sample of 100 matches scaled to 20,000: 3 standard deviations below is 14,000, over the limit of 10,000.
    const sampled = new Proxy(database.db, {
      get: (target, property, receiver) =>
        property === "execute"
          ? (query: Parameters<SignonDatabase["execute"]>[0]) =>
              sqlText(query).includes("tablesample") ? Promise.resolve({ rows: [{ matches: 100, estimate: 20_000 }] }) : target.execute(query)
          : property === "transaction"
            ? (...args: unknown[]) => {
                counts += 1;
                return (target.transaction as (...a: unknown[]) => unknown)(...args);
              }
            : Reflect.get(target, property, receiver),
    }) as SignonDatabase;
    expect(await countUsers(sampled, search("qqsampled"), 10_000)).toEqual({ count: 20_000, exact: false, moreThan: false, tooSlowToCount: false });
    expect(counts).toBe(0);
    // Near the limit the sample settles nothing: the people are counted.
    expect(sampleSettlesOver({ matches: 60, estimate: 12_000 }, 10_000)).toBe(false);
    expect(sampleSettlesOver({ matches: 80, estimate: 16_000 }, 10_000)).toBe(true);
    expect(sampleSettlesOver({ matches: 0, estimate: 0 }, 0)).toBe(false);
  });

  it("answers the sample's estimate when the count runs past its budget (the statement timeout cancels it)", async () => {
    await addPeople("Qqslow", 3);
    const cancelled = Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" });
    // The database as it is, except that every count is cancelled by its timeout.
    const slow = new Proxy(database.db, {
      get: (target, property, receiver) => (property === "transaction" ? () => Promise.reject(cancelled) : Reflect.get(target, property, receiver)),
    }) as SignonDatabase;
    const counted = await countUsers(slow, search("qqslow"), 10);
    expect(counted).toMatchObject({ exact: false, moreThan: false, tooSlowToCount: true });
    expect(counted.count).toBeGreaterThanOrEqual(0);
  });
});
