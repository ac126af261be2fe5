import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { grantPermissions } from "../../src/applications/permissions.js";
import { auditEvents, pushDeliveries } from "../../src/db/schema.js";
import { listPermissions } from "../../src/repositories/permissions.js";
import { signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";
import { signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

async function publisher() {
  return (await createApp(ctx, { name: "Publisher", permissions: ["editor"], pushBaseUrl: "https://publisher.example/push" })).application;
}

describe("GET /account", () => {
  it("offers a way to give up each application the person holds permissions on", async () => {
    const application = await publisher();
    const { browser, email } = await signedInAs(app, ctx, "normal");
    const page = await browser.get("/account");
    expect(page.body).not.toContain("/give-up");
    await grantPermissions(ctx, { email, application: "Publisher", permissions: ["signin", "editor"] });
    const withAccess = await browser.get("/account");
    expect(withAccess.body).toContain(`<a href="/account/applications/${application.id}/give-up">Give up access<span class="visually-hidden"> to Publisher</span></a>`);
  });
});

describe("GET and POST /account/applications/:id/give-up", () => {
  it("asks first, then removes every permission the person holds there, tells the application and audits it", async () => {
    const application = await publisher();
    const other = await createApp(ctx, { name: "Other" });
    const person = await createUser(ctx, { role: "normal", permissions: { Publisher: ["signin", "editor"], [other.application.name]: ["signin"] } });
    const browser = await signedInBrowser(app, person.email, defaultPassword);
    await ctx.db.delete(pushDeliveries);
    const url = `/account/applications/${application.id}/give-up`;

    const confirmation = await browser.get(url);
    expect(confirmation.statusCode).toBe(200);
    const text = textOf(confirmation);
    expect(text).toContain("Give up your access to Publisher");
    expect(text).toContain("Your permissions on Publisher are removed: editor, signin.");
    expect(text).toContain("You can no longer sign in to Publisher");
    expect(confirmation.body).toContain('<input type="hidden" name="confirm" value="yes">');
    expect(confirmation.body).toContain('href="/account"');

    const unconfirmed = await browser.submit(url, url, {});
    expect(unconfirmed.statusCode).toBe(400);
    expect(textOf(unconfirmed)).toContain("Nothing has changed yet");
    expect(await listPermissions(ctx.db, person.uid, application.id)).toEqual(["editor", "signin"]);

    const done = await browser.submit(url, url, { confirm: "yes" });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe("/account");
    expect(textOf(await browser.follow(done))).toContain("You no longer have access to Publisher.");
    expect(await listPermissions(ctx.db, person.uid, application.id)).toEqual([]);
    expect(await listPermissions(ctx.db, person.uid, other.application.id)).toEqual(["signin"]);

    const pushes = await ctx.db.select().from(pushDeliveries).where(and(eq(pushDeliveries.userUid, person.uid), eq(pushDeliveries.applicationId, application.id)));
    expect(pushes.map((push) => push.kind).sort()).toEqual(["reauth", "update"]);
    const events = await ctx.db.select().from(auditEvents).where(eq(auditEvents.action, "application_access_given_up"));
    expect(events).toMatchObject([{ actorUid: person.uid, subjectUid: person.uid, applicationId: application.id, details: { permissions: ["editor", "signin"] } }]);
    expect(textOf(await browser.get("/account"))).toContain("You gave up your access to an application (Publisher)");

    // Nothing is left to give up: the page is gone.
    expect((await browser.get(url)).statusCode).toBe(404);
    expect((await browser.submit("/account", url, { confirm: "yes" })).statusCode).toBe(404);
  });

  it("answers 404 for an application the person holds nothing on, or a malformed id, and needs sign-in and CSRF", async () => {
    const application = await publisher();
    const holder = await createUser(ctx, { permissions: { Publisher: ["signin"] } });
    const { browser } = await signedInAs(app, ctx, "superadmin");
    expect((await browser.get(`/account/applications/${application.id}/give-up`)).statusCode).toBe(404);
    expect((await browser.get("/account/applications/nope/give-up")).statusCode).toBe(404);
    expect((await browser.postForm(`/account/applications/${application.id}/give-up`, { confirm: "yes" })).statusCode).toBe(403);
    const anonymous = await app.inject({ method: "GET", url: `/account/applications/${application.id}/give-up` });
    expect(anonymous.statusCode).toBe(303);
    expect(await listPermissions(ctx.db, holder.uid, application.id)).toEqual(["signin"]);
  });
});
