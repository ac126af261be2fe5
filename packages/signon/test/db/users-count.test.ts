// The users list's count on PostgreSQL: exact up to the limit whatever the estimate, past it an estimate from a
// sample of the table or "more than" the limit, the organisation's own count for an organisation alone, and a larger
// sample when counting would take longer than its budget. The choices themselves are tested from figures alone in
// test/unit/user-search-plan.test.ts.
import { sql, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import type { SignonDatabase } from "../../src/db/database.js";
import type { UserSearch } from "../../src/repositories/user-search.js";
import { exactCountLimit } from "../../src/user-search/plan.js";
import { countPeople, planSearch } from "../../src/user-search/read.js";
import { useTestSignon } from "../support/signon.js";
import { createTestOrganisation } from "../web/users-support.js";

const { database, signon } = await useTestSignon();

/** The text of a query, to tell which one a stand-in database is asked. */
const sqlText = (query: unknown) => new PgDialect().sqlToQuery(query as SQL).sql.toLowerCase();

const everyRole = ["superadmin", "admin", "super_organisation_admin", "organisation_admin", "normal"];

function search(more: Partial<UserSearch>): UserSearch {
  return { scopeRoles: everyRole, locksSetAfter: new Date(0), twoStepRules: { requiredRoles: [], now: new Date() }, ...more };
}

async function addPeople(prefix: string, count: number, organisationId: string | null = null): Promise<void> {
  await database.db.execute(sql`
    insert into signon.users (uid, name, email, organisation_id, created_at, updated_at)
    select gen_random_uuid(), ${prefix} || ' ' || n, ${prefix} || n || '@count.test', ${organisationId}, now(), now() from generate_series(1, ${count}) n`);
}

/** The database as it is, except that `answer` stands in for the queries it recognises; counts what it is asked. */
function standIn(answer: (text: string) => unknown, transaction?: () => Promise<unknown>) {
  const asked = { samples: 0, transactions: 0 };
  const db = new Proxy(database.db, {
    get: (target, property, receiver) => {
      if (property === "execute") {
        return (query: Parameters<SignonDatabase["execute"]>[0]) => {
          const text = sqlText(query);
          if (text.includes("tablesample")) asked.samples += 1;
          const answered = answer(text);
          return answered === undefined ? target.execute(query) : Promise.resolve(answered);
        };
      }
      if (property === "transaction") {
        return (...args: unknown[]) => {
          asked.transactions += 1;
          return transaction ? transaction() : (target.transaction as (...a: unknown[]) => unknown)(...args);
        };
      }
      return Reflect.get(target, property, receiver);
    },
  }) as SignonDatabase;
  return { db, asked };
}

async function counted(db: SignonDatabase, wanted: UserSearch) {
  return countPeople(db, await planSearch(db, wanted));
}

describe("the users list's count", () => {
  it("counts exactly up to the limit", async () => {
    await addPeople("Qqexact", 7);
    expect(await counted(database.db, search({ text: "qqexact" }))).toEqual({ count: 7, exact: true, moreThan: false, tooSlowToCount: false });
  });

  it("counts exactly when PostgreSQL's estimate is far over the limit but the truth is under it", async () => {
    await addPeople("Qqfew", 4);
    // Statistics that say a million people hold the text: the count still says 4, exactly.
    const { db } = standIn((text) => (text.includes("explain") ? { rows: [{ "QUERY PLAN": [{ Plan: { "Plan Rows": 1_000_000 } }] }] } : undefined));
    expect(await counted(db, search({ text: "qqfew" }))).toEqual({ count: 4, exact: true, moreThan: false, tooSlowToCount: false });
  });

  it("past the limit, says more than the limit when the sample does not prove more, and the sample's estimate when it does", async () => {
    await addPeople("Qqmany", exactCountLimit + 30);
    // A sample that finds few: the count's bound, which is true, rather than the sample.
    const unlucky = standIn((text) => (text.includes("tablesample") ? { rows: [{ rows: 5_000, matches: 2, table_rows: 1_000_000 }] } : undefined));
    expect(await counted(unlucky.db, search({ text: "qqmany" }))).toEqual({ count: exactCountLimit, exact: false, moreThan: true, tooSlowToCount: false });
    // A sample of 70 matches in 5,000 rows of a million: 14,000, whose low end (3 standard deviations) is under the
    // limit, so the people are counted first; past the limit, the estimate.
    const near = standIn((text) => (text.includes("tablesample") ? { rows: [{ rows: 5_000, matches: 70, table_rows: 1_000_000 }] } : undefined));
    expect(await counted(near.db, search({ text: "qqmany" }))).toEqual({ count: 14_000, exact: false, moreThan: false, tooSlowToCount: false });
    expect(near.asked.transactions).toBeGreaterThan(0);
  });

  it("answers a sample's estimate without counting when even its low end is over the limit, and never more than the people there are", async () => {
    await addPeople("Qqsampled", 3);
    const sampled = standIn((text) => (text.includes("tablesample") ? { rows: [{ rows: 5_000, matches: 100, table_rows: 1_000_000 }] } : undefined));
    const planned = await planSearch(sampled.db, search({ text: "qqsampled" }));
    expect(planned.plan.count).toEqual({ kind: "estimate" });
    expect(await countPeople(sampled.db, planned)).toEqual({ count: 20_000, exact: false, moreThan: false, tooSlowToCount: false });
    expect(sampled.asked.transactions).toBe(0);
    // Every sampled row matches: the estimate is the table's size, never more.
    const everyone = standIn((text) => (text.includes("tablesample") ? { rows: [{ rows: 5_203, matches: 5_203, table_rows: 1_000_001 }] } : undefined));
    expect((await counted(everyone.db, search({ text: "qqsampled" }))).count).toBe(1_000_001);
  });

  it("shows an organisation's own count for it alone, without counting, and never more than it has otherwise", async () => {
    const organisation = await createTestOrganisation(signon.ctx);
    await addPeople("Qqmember", 12, organisation.id);
    // An API user of the organisation counts in its member count, not in the list.
    await database.db.execute(sql`
      insert into signon.users (uid, name, email, is_api_user, organisation_id, created_at, updated_at)
      values (gen_random_uuid(), 'Qq robot', 'qq-robot@count.test', true, ${organisation.id}, now(), now())`);
    const { db, asked } = standIn(() => undefined);
    expect(await counted(db, search({ organisationId: organisation.id }))).toEqual({ count: 12, exact: true, moreThan: false, tooSlowToCount: false });
    expect(asked.transactions).toBe(0);
    // Beside another filter: a sample that says far more is held to the organisation's people.
    const generous = standIn((text) => (text.includes("tablesample") ? { rows: [{ rows: 5_000, matches: 500, table_rows: 1_000_000 }] } : undefined));
    expect(await counted(generous.db, search({ organisationId: organisation.id, status: "active" }))).toMatchObject({ count: 12 });
  });

  it("reads a larger sample when counting runs past its budget and the first sample found too few to trust", async () => {
    await addPeople("Qqslow", 3);
    const cancelled = Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" });
    // Every count is cancelled by its timeout; the first sample finds 2 of 5,000 rows, the larger one 91 of 100,000.
    const slow = standIn(
      (text) => {
        if (!text.includes("tablesample")) return undefined;
        return slow.asked.samples === 1 ? { rows: [{ rows: 5_000, matches: 2, table_rows: 1_000_000 }] } : { rows: [{ rows: 100_000, matches: 91, table_rows: 1_000_000 }] };
      },
      () => Promise.reject(cancelled),
    );
    expect(await counted(slow.db, search({ text: "qqslow" }))).toEqual({ count: 910, exact: false, moreThan: false, tooSlowToCount: true });
    expect(slow.asked.samples).toBe(2);
  });
});
