// What retiring an application or replacing its secret would stop, counted in bounded work: past 10,000 people
// the count stops and the confirmation says "more than 10,000".
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { findApplicationReach, reachCountLimit } from "../../src/repositories/application-reach.js";
import { createApp } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();

async function peopleHoldingSignin(applicationId: string, count: number): Promise<void> {
  await database.db.execute(sql`
    with people as (
      insert into signon.users (uid, name, email, created_at, updated_at)
      select gen_random_uuid(), 'Reach ' || n, 'reach-' || ${applicationId} || '-' || n || '@reach.test', now(), now() from generate_series(1, ${count}) n
      returning uid)
    insert into signon.user_permissions (user_uid, application_id, permission, created_at)
    select uid, ${applicationId}::uuid, 'signin', now() from people`);
}

describe("findApplicationReach", () => {
  it("counts the people who may sign in exactly up to 10,000, and stops one past it", async () => {
    const few = await createApp(signon.ctx, { name: "Few" });
    const many = await createApp(signon.ctx, { name: "Many" });
    await peopleHoldingSignin(few.application.id, 3);
    await peopleHoldingSignin(many.application.id, reachCountLimit + 50);

    expect((await findApplicationReach(database.db, few.application.id, new Date())).peopleWhoMaySignIn).toBe(3);
    expect((await findApplicationReach(database.db, many.application.id, new Date())).peopleWhoMaySignIn).toBe(reachCountLimit + 1);
  });
});
