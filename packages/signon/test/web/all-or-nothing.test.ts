import { eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { issueApiUserToken } from "../../src/accounts/api-users.js";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { auditEvents, grants, pushDeliveries } from "../../src/db/schema.js";
import { listPermissionsOfUser } from "../../src/repositories/user-form-choices.js";
import { createApp, createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { signedInAs, submitMany } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

/**
 * Makes the database refuse inserts into `table` when `condition` holds, as
 * a full disk or a lost connection would part-way through a change.
 */
async function refuseInserts(table: string, condition: string): Promise<void> {
  await ctx.db.execute(
    sql.raw(`create or replace function signon.refuse_for_test() returns trigger language plpgsql as $$
      begin
        if ${condition} then raise exception 'refused for the test'; end if;
        return new;
      end $$`),
  );
  await ctx.db.execute(sql.raw(`create trigger refuse_for_test before insert on signon.${table} for each row execute function signon.refuse_for_test()`));
  refusedTables.push(table);
}

const refusedTables: string[] = [];
afterEach(async () => {
  for (const table of refusedTables.splice(0)) await ctx.db.execute(sql.raw(`drop trigger if exists refuse_for_test on signon.${table}`));
});

describe("POST /users/:uid/permissions when the database fails part-way", () => {
  it("changes no application's permissions: the grid is saved in one transaction", async () => {
    const alpha = (await createApp(ctx, { name: "Alpha", permissions: ["editor"] })).application;
    const zulu = (await createApp(ctx, { name: "Zulu", permissions: ["editor"] })).application;
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { permissions: { Alpha: ["signin"] } });
    const eventsBefore = await ctx.db.select().from(auditEvents).where(eq(auditEvents.subjectUid, target.uid));
    const pushesBefore = await ctx.db.select().from(pushDeliveries).where(eq(pushDeliveries.userUid, target.uid));
    // Alpha comes first on the grid; the grant on Zulu, after it, fails.
    await refuseInserts("user_permissions", `new.application_id = '${zulu.id}'`);

    const response = await submitMany(app, browser, `/users/${target.uid}/permissions`, `/users/${target.uid}/permissions`, {
      permissions: [`${alpha.id}:editor`, `${zulu.id}:signin`, `${zulu.id}:editor`],
    });
    expect(response.statusCode).toBe(500);
    // Alpha's signin (unticked) is not revoked and its editor (ticked) not granted.
    expect(await listPermissionsOfUser(ctx.db, target.uid)).toEqual([{ applicationId: alpha.id, permission: "signin" }]);
    expect(await ctx.db.select().from(auditEvents).where(eq(auditEvents.subjectUid, target.uid))).toHaveLength(eventsBefore.length);
    expect(await ctx.db.select().from(pushDeliveries).where(eq(pushDeliveries.userUid, target.uid))).toEqual(pushesBefore);
  });

  it("saves every application's changes together when nothing fails", async () => {
    const alpha = (await createApp(ctx, { name: "Alpha", permissions: ["editor"] })).application;
    const zulu = (await createApp(ctx, { name: "Zulu", permissions: ["editor"] })).application;
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { permissions: { Alpha: ["signin"] } });
    const response = await submitMany(app, browser, `/users/${target.uid}/permissions`, `/users/${target.uid}/permissions`, {
      permissions: [`${alpha.id}:editor`, `${zulu.id}:signin`],
    });
    expect(response.statusCode).toBe(303);
    const held = (await listPermissionsOfUser(ctx.db, target.uid)).map((row) => `${row.applicationId === alpha.id ? "Alpha" : "Zulu"}:${row.permission}`);
    expect(held.sort()).toEqual(["Alpha:editor", "Zulu:signin"]);
  });
});

describe("issueApiUserToken when the token cannot be stored", () => {
  it("leaves no permission granted: the grant and the token are one transaction", async () => {
    const { application } = await createApp(ctx, { name: "Reports", permissions: ["read"] });
    const actor = await createUser(ctx, { role: "superadmin" });
    const robot = await createApiUser(ctx, { name: "Robot", email: "robot@example.org" });
    await refuseInserts("grants", "new.kind = 'issued'");

    await expect(issueApiUserToken(ctx, { user: robot, applicationId: application.id, permissions: ["read"], expiresInDays: 30 }, actor.uid)).rejects.toThrow();
    expect(await listPermissionsOfUser(ctx.db, robot.uid)).toEqual([]);
    expect(await ctx.db.select().from(pushDeliveries).where(eq(pushDeliveries.userUid, robot.uid))).toEqual([]);
    expect(await ctx.db.select().from(auditEvents).where(eq(auditEvents.action, "permissions_granted"))).toEqual([]);
  });

  it("grants signin and the permissions and issues the token when nothing fails", async () => {
    const { application } = await createApp(ctx, { name: "Reports", permissions: ["read"] });
    const actor = await createUser(ctx, { role: "superadmin" });
    const robot = await createApiUser(ctx, { name: "Robot", email: "robot@example.org" });
    const issued = await issueApiUserToken(ctx, { user: robot, applicationId: application.id, permissions: ["read"], expiresInDays: 30 }, actor.uid);
    expect(issued.permissions.sort()).toEqual(["read", "signin"]);
    expect(await ctx.db.select().from(grants).where(eq(grants.userUid, robot.uid))).toHaveLength(1);
  });
});
