import { and, desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { suspendUser } from "../../src/accounts/manage-users.js";
import { auditEvents } from "../../src/db/schema.js";
import { createApp, createUser, lockUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { signedInAs, submitMany } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

/** Where the latest event of this kind about the user came from. */
async function originOf(subjectUid: string, action: string) {
  const [latest] = await ctx.db
    .select({ ip: auditEvents.ip, userAgent: auditEvents.userAgent, actorUid: auditEvents.actorUid })
    .from(auditEvents)
    .where(and(eq(auditEvents.subjectUid, subjectUid), eq(auditEvents.action, action)))
    .orderBy(desc(auditEvents.id))
    .limit(1);
  expect(latest, action).toBeDefined();
  return latest;
}

describe("audit events of administrators' actions on the users pages", () => {
  it("record where the request came from: IP address and user agent", async () => {
    const { application } = await createApp(ctx, { name: "Publisher", permissions: ["editor"] });
    const { browser, uid: adminUid } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { permissions: { Publisher: ["signin"] } });
    const page = `/users/${target.uid}`;
    const from = { ip: "127.0.0.1", userAgent: "lightMyRequest", actorUid: adminUid };

    expect((await browser.submit(page, `${page}/suspend`, { reason: "Left the team", confirm: "yes" })).statusCode).toBe(303);
    expect(await originOf(target.uid, "user_suspended")).toEqual(from);
    expect((await browser.submit(page, `${page}/unsuspend`)).statusCode).toBe(303);
    expect(await originOf(target.uid, "user_unsuspended")).toEqual(from);

    await lockUser(ctx, target.uid);
    expect((await browser.submit(page, `${page}/unlock`)).statusCode).toBe(303);
    expect(await originOf(target.uid, "account_unlocked")).toEqual(from);

    const edit = { name: "Renamed", email: target.email, role: "organisation_admin", organisation: "" };
    expect((await browser.submit(page, page, edit)).statusCode).toBe(303);
    expect(await originOf(target.uid, "role_changed")).toEqual(from);
    expect(await originOf(target.uid, "user_updated")).toEqual(from);

    const grid = `${page}/permissions`;
    expect((await submitMany(app, browser, grid, grid, { permissions: [`${application.id}:signin`, `${application.id}:editor`] })).statusCode).toBe(303);
    expect(await originOf(target.uid, "permissions_granted")).toEqual(from);
    expect((await submitMany(app, browser, grid, grid, { permissions: [`${application.id}:signin`] })).statusCode).toBe(303);
    expect(await originOf(target.uid, "permissions_revoked")).toEqual(from);
  });

  it("record no origin for changes made outside a request (command line, scheduled jobs)", async () => {
    const target = await createUser(ctx);
    await suspendUser(ctx, target.email, "Left");
    expect(await originOf(target.uid, "user_suspended")).toEqual({ ip: null, userAgent: null, actorUid: null });
  });
});
