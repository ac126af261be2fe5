// The users list's count: exact up to the limit, "more than" the limit when more match than the estimate
// said, and PostgreSQL's estimate when counting would take longer than its budget.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { SignonDatabase } from "../../src/db/database.js";
import { countUsers, type UserSearch } from "../../src/repositories/user-search.js";
import { useTestSignon } from "../support/signon.js";

const { database } = await useTestSignon();

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

  it("says more than the limit when more people match than the estimate said, having counted only one past it", async () => {
    await addPeople("Qqmany", 30);
    expect(await countUsers(database.db, search("qqmany"), 10)).toEqual({ count: 10, exact: false, moreThan: true, tooSlowToCount: false });
  });

  it("answers PostgreSQL's estimate when the count runs past its budget (the statement timeout cancels it)", async () => {
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
