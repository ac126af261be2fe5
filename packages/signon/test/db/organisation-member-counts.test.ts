// Each organisation's number of users is kept on its row by triggers on signon.users (migration 0020): exact after
// every kind of change, one row or many, and whatever changes run at once.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { countMembers, listOrganisationSummaries } from "../../src/repositories/organisation-admin.js";
import { createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();

/** Each organisation's kept count beside the count of its users, by slug. */
async function keptAndTrue(): Promise<Record<string, [number, number]>> {
  const { rows } = await database.db.execute<{ slug: string; kept: number; counted: number }>(sql`
    select o.slug, o.member_count as kept, (select count(*)::int from signon.users u where u.organisation_id = o.id) as counted
      from signon.organisations o order by o.slug`);
  return Object.fromEntries(rows.map((row) => [row.slug, [row.kept, row.counted]]));
}

async function addPeople(organisationId: string | null, count: number, prefix: string): Promise<void> {
  await database.db.execute(sql`
    insert into signon.users (uid, name, email, organisation_id, created_at, updated_at)
    select gen_random_uuid(), ${prefix} || ' ' || n, ${prefix} || n || '@members.test', ${organisationId}::uuid, now(), now()
      from generate_series(1, ${count}) n`);
}

describe("organisations' member counts", () => {
  it("follow people and API users added one at a time or many in one statement, moved, and removed", async () => {
    const north = await createOrganisation(signon.ctx, { slug: "north", name: "North" });
    const south = await createOrganisation(signon.ctx, { slug: "south", name: "South" });
    await createUser(signon.ctx, { organisationId: north.id });
    await database.db.execute(sql`
      insert into signon.users (uid, name, email, organisation_id, is_api_user, created_at, updated_at)
      values (gen_random_uuid(), 'North robot', 'robot@members.test', ${north.id}::uuid, true, now(), now())`);
    await addPeople(south.id, 250, "southerner");
    await addPeople(null, 10, "nowhere");
    expect(await keptAndTrue()).toEqual({ north: [2, 2], south: [250, 250] });

    // Some move north, some leave their organisation, some join one, one statement each.
    await database.db.execute(sql`update signon.users set organisation_id = ${north.id}::uuid where email like 'southerner1%'`);
    await database.db.execute(sql`update signon.users set organisation_id = null where email like 'southerner2%'`);
    await database.db.execute(sql`update signon.users set organisation_id = ${south.id}::uuid where email like 'nowhere%'`);
    // A change that moves nobody (a sign-in) leaves every count as it is.
    await database.db.execute(sql`update signon.users set last_signed_in_at = now()`);
    await database.db.execute(sql`delete from signon.users where email like 'southerner3%'`);
    const counts = await keptAndTrue();
    for (const [kept, counted] of Object.values(counts)) expect(kept).toBe(counted);
    expect(counts["north"]?.[0]).toBeGreaterThan(100);

    expect(await countMembers(database.db, south.id)).toBe(counts["south"]?.[1]);
    expect((await listOrganisationSummaries(database.db)).map((summary) => [summary.slug, summary.userCount])).toEqual([
      ["north", counts["north"]?.[1]],
      ["south", counts["south"]?.[1]],
    ]);
  });

  it("stay exact while many changes run at once, and go to zero when the table is emptied", async () => {
    const organisations = await Promise.all(["a", "b", "c"].map((slug) => createOrganisation(signon.ctx, { slug, name: slug.toUpperCase() })));
    await addPeople(organisations[0]?.id ?? null, 300, "mover");
    const ids = organisations.map((organisation) => organisation.id);
    // 60 statements at once over the pool's connections, each moving its own five people to one of the three.
    // Every statement's trigger locks the organisations it touched, and they are locked in one order, so none
    // deadlocks. (Statements that update the same people at once may deadlock on those rows, as in any
    // PostgreSQL table; the services run them in transactions that are run again when that happens.)
    await Promise.all(
      Array.from({ length: 60 }, (_, n) =>
        database.db.execute(
          sql`update signon.users set organisation_id = ${ids[n % 3] as string}::uuid where split_part(name, ' ', 2)::int % 60 = ${n}`,
        ),
      ),
    );
    const counts = await keptAndTrue();
    for (const [kept, counted] of Object.values(counts)) expect(kept).toBe(counted);
    expect(Object.values(counts).reduce((sum, [kept]) => sum + kept, 0)).toBe(300);

    await database.db.execute(sql`truncate signon.users cascade`);
    expect(await keptAndTrue()).toEqual({ a: [0, 0], b: [0, 0], c: [0, 0] });
  });
});
