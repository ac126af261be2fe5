import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { applications, auditEvents, pushDeliveries } from "../../src/db/schema.js";
import { listPermissions } from "../../src/repositories/permissions.js";
import type { InjectBrowser } from "../support/browser.js";
import { createApp, createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";
import { createTestOrganisation, signedInAs, submitMany } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

/** The grid's form as a browser would send it from the page as shown: its hidden fields and the boxes ticked. */
async function gridForm(browser: InjectBrowser, page: string): Promise<{ hidden: [string, string][]; ticked: Set<string> }> {
  const html = (await browser.get(page)).body;
  const start = html.indexOf('id="permissions-form"');
  const body = html.slice(start, html.indexOf("</form>", start));
  const hidden = [...body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match): [string, string] => [match[1]!, match[2]!]);
  const ticked = new Set([...body.matchAll(/name="permissions" value="([^"]+)" checked(?! disabled)/g)].map((match) => match[1]!));
  return { hidden, ticked };
}

/** Posts a grid form after ticking and clearing boxes on it. */
async function postGrid(browser: InjectBrowser, page: string, form: { hidden: [string, string][]; ticked: Set<string> }, change: { tick?: string[]; clear?: string[] }) {
  const ticked = new Set(form.ticked);
  for (const value of change.tick ?? []) ticked.add(value);
  for (const value of change.clear ?? []) ticked.delete(value);
  const body = new URLSearchParams(form.hidden);
  for (const value of ticked) body.append("permissions", value);
  return app.inject({ method: "POST", url: page, headers: { cookie: browser.cookieHeader, "content-type": "application/x-www-form-urlencoded" }, payload: body.toString() });
}

async function publishingApp() {
  return (await createApp(ctx, { name: "Publisher", permissions: ["editor", "publisher"], delegatablePermissions: ["signin", "editor"], pushBaseUrl: "https://publisher.example/push" })).application;
}

describe("GET /users/:uid/permissions", () => {
  it("shows one fieldset per live application with a box per permission, ticked when held", async () => {
    const application = await publishingApp();
    const retired = (await createApp(ctx, { name: "Old" })).application;
    await ctx.db.update(applications).set({ retired: true }).where(eq(applications.id, retired.id));
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { permissions: { Publisher: ["signin", "editor"] } });

    const response = await browser.get(`/users/${target.uid}/permissions`);
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain("<legend>Publisher</legend>");
    expect(response.body).not.toContain("<legend>Old</legend>");
    expect(response.body).toMatch(new RegExp(`value="${application.id}:editor" checked>`));
    expect(response.body).toMatch(new RegExp(`value="${application.id}:publisher">`));
    expect(response.body).not.toContain("disabled");
  });

  for (const role of ["organisation_admin", "super_organisation_admin"] as const) {
    it(`shows a ${role} only the applications and permissions they may grant`, async () => {
      const application = await publishingApp();
      await createApp(ctx, { name: "Finance", permissions: ["approver"] });
      const organisation = await createTestOrganisation(ctx);
      const { browser } = await signedInAs(app, ctx, role, organisation.id, { Publisher: ["signin"], Finance: ["signin"] });
      const target = await createUser(ctx, { organisationId: organisation.id, permissions: { Publisher: ["publisher", "signin"], Finance: ["signin"] } });
      const response = await browser.get(`/users/${target.uid}/permissions`);
      expect(response.statusCode).toBe(200);
      const boxes = [...response.body.matchAll(/<legend>([^<]+)<\/legend>|name="permissions" value="([0-9a-f-]{36}:[a-z_]+)"( checked)?/g)].map((match) => match[1] ?? `${match[2]}${match[3] ?? ""}`);
      expect(boxes).toEqual(["Publisher", `${application.id}:editor`, `${application.id}:signin checked`]);
      expect(response.body).not.toContain("you cannot change this one");
      expect(response.body).not.toContain("disabled");
    });
  }

  it("refuses normal users", async () => {
    const target = await createUser(ctx);
    const { browser } = await signedInAs(app, ctx, "normal");
    expect((await browser.get(`/users/${target.uid}/permissions`)).statusCode).toBe(403);
  });
});

describe("POST /users/:uid/permissions", () => {
  it("grants what was ticked and revokes what was cleared, through the push outbox", async () => {
    const application = await publishingApp();
    const { browser, uid: actorUid } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { permissions: { Publisher: ["signin", "editor"] } });
    await ctx.db.delete(pushDeliveries);
    const page = `/users/${target.uid}/permissions`;

    const response = await submitMany(app, browser, page, page, { permissions: [`${application.id}:signin`, `${application.id}:publisher`] });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(page);
    expect(await listPermissions(ctx.db, target.uid, application.id)).toEqual(["publisher", "signin"]);
    expect(textOf(await browser.get(page))).toContain("Permissions saved: 1 permission granted, 1 permission revoked.");

    const events = await ctx.db.select().from(auditEvents).where(eq(auditEvents.subjectUid, target.uid));
    expect(events.filter((event) => event.action === "permissions_granted").at(-1)).toMatchObject({ actorUid, applicationId: application.id, details: { permissions: ["publisher"] } });
    expect(events.filter((event) => event.action === "permissions_revoked")).toMatchObject([{ actorUid, details: { permissions: ["editor"] } }]);
    const pushes = await ctx.db.select().from(pushDeliveries).where(and(eq(pushDeliveries.userUid, target.uid), eq(pushDeliveries.applicationId, application.id)));
    expect(pushes.map((push) => push.kind)).toEqual(["update"]);

    const cleared = await submitMany(app, browser, page, page, {});
    expect(cleared.statusCode).toBe(303);
    expect(await listPermissions(ctx.db, target.uid, application.id)).toEqual([]);
    const afterSignin = await ctx.db.select().from(pushDeliveries).where(eq(pushDeliveries.userUid, target.uid));
    expect(afterSignin.map((push) => push.kind).sort()).toEqual(["reauth", "update"]);
  });

  it("saves only what was changed on the page: a grid left open in another tab neither revokes what was granted since nor grants again what was revoked since", async () => {
    const application = await publishingApp();
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { permissions: { Publisher: ["signin", "editor"] } });
    const page = `/users/${target.uid}/permissions`;
    const box = (permission: string) => `${application.id}:${permission}`;
    const openedFirst = await gridForm(browser, page);
    expect(openedFirst.hidden.filter(([name]) => name !== "_csrf")).toEqual([
      ["shown", "yes"],
      ["shown_held", box("editor")],
      ["shown_held", box("signin")],
    ]);

    // Another tab grants publisher and revokes signin.
    const openedSecond = await gridForm(browser, page);
    const second = await postGrid(browser, page, openedSecond, { tick: [box("publisher")], clear: [box("signin")] });
    expect(second.statusCode, second.body).toBe(303);
    expect(await listPermissions(ctx.db, target.uid, application.id)).toEqual(["editor", "publisher"]);

    // The first tab, still showing signin ticked and publisher clear, only clears editor.
    const response = await postGrid(browser, page, openedFirst, { clear: [box("editor")] });
    expect(response.statusCode).toBe(303);
    expect(await listPermissions(ctx.db, target.uid, application.id)).toEqual(["publisher"]);
    expect(textOf(await browser.get(page))).toContain("Permissions saved: 0 permissions granted, 1 permission revoked.");

    // A page shown while publisher was held, after another tab moved publisher to editor: ticking signin on it adds
    // signin, and neither brings publisher back nor takes editor away.
    const stale = await gridForm(browser, page);
    expect((await postGrid(browser, page, await gridForm(browser, page), { tick: [box("editor")], clear: [box("publisher")] })).statusCode).toBe(303);
    expect((await postGrid(browser, page, stale, { tick: [box("signin")] })).statusCode).toBe(303);
    expect(await listPermissions(ctx.db, target.uid, application.id)).toEqual(["editor", "signin"]);

    // Clearing on a stale page what another tab revoked already changes nothing.
    const staler = await gridForm(browser, page);
    await postGrid(browser, page, await gridForm(browser, page), { clear: [box("signin")] });
    expect((await postGrid(browser, page, staler, { clear: [box("signin")] })).statusCode).toBe(303);
    expect(await listPermissions(ctx.db, target.uid, application.id)).toEqual(["editor"]);
    expect(textOf(await browser.get(page))).toContain("No permissions changed.");
  });

  it("lets organisation admins change delegatable permissions only, leaving the others as they are and refusing a hand-made revoke of one", async () => {
    const application = await publishingApp();
    const organisation = await createTestOrganisation(ctx);
    const { browser } = await signedInAs(app, ctx, "organisation_admin", organisation.id, { Publisher: ["signin"] });
    const target = await createUser(ctx, { organisationId: organisation.id, permissions: { Publisher: ["publisher"] } });
    const page = `/users/${target.uid}/permissions`;

    // The disabled publisher box is not sent by a browser: it stays granted.
    const response = await submitMany(app, browser, page, page, { permissions: [`${application.id}:signin`] });
    expect(response.statusCode).toBe(303);
    expect(await listPermissions(ctx.db, target.uid, application.id)).toEqual(["publisher", "signin"]);

    // A hand-made revoke of it (shown ticked, sent cleared) is refused with 403 as a grant would be, changing nothing.
    const revoke = await submitMany(app, browser, page, page, { shown: "yes", shown_held: [`${application.id}:signin`, `${application.id}:publisher`] });
    expect(revoke.statusCode).toBe(403);
    expect(await listPermissions(ctx.db, target.uid, application.id)).toEqual(["publisher", "signin"]);
  });

  for (const role of ["organisation_admin", "super_organisation_admin"] as const) {
    it(`lets a ${role} grant or revoke only on applications they may sign in to themselves, refusing a hand-made grant or revoke for another`, async () => {
      const publisher = await publishingApp();
      const finance = (await createApp(ctx, { name: "Finance", permissions: ["approver"], delegatablePermissions: ["signin", "approver"] })).application;
      const organisation = await createTestOrganisation(ctx);
      const { browser } = await signedInAs(app, ctx, role, organisation.id, { Publisher: ["signin"] });
      const target = await createUser(ctx, { organisationId: organisation.id, permissions: { Publisher: ["signin"], Finance: ["signin"] } });
      const page = `/users/${target.uid}/permissions`;

      // Finance is not on the grid: the administrator cannot sign in to it.
      const grid = await browser.get(page);
      expect(grid.body).toContain("<legend>Publisher</legend>");
      expect(grid.body).not.toContain(`value="${finance.id}:`);

      // A post naming a Finance box is refused and changes nothing, on either application.
      const tampered = await submitMany(app, browser, page, page, { permissions: [`${publisher.id}:signin`, `${publisher.id}:editor`, `${finance.id}:approver`] });
      expect(tampered.statusCode).toBe(403);
      expect(await listPermissions(ctx.db, target.uid, publisher.id)).toEqual(["signin"]);
      expect(await listPermissions(ctx.db, target.uid, finance.id)).toEqual(["signin"]);

      // A hand-made revoke of their Finance signin (a form saying it showed the box ticked, and sent it cleared) is refused too.
      const revoke = await submitMany(app, browser, page, page, { shown: "yes", shown_held: [`${publisher.id}:signin`, `${finance.id}:signin`], permissions: [`${publisher.id}:signin`] });
      expect(revoke.statusCode).toBe(403);
      expect(await listPermissions(ctx.db, target.uid, finance.id)).toEqual(["signin"]);

      // Their Finance signin is theirs to keep: a post without it leaves it, as the grid never showed it.
      const saved = await submitMany(app, browser, page, page, { permissions: [`${publisher.id}:editor`] });
      expect(saved.statusCode).toBe(303);
      expect(await listPermissions(ctx.db, target.uid, publisher.id)).toEqual(["editor"]);
      expect(await listPermissions(ctx.db, target.uid, finance.id)).toEqual(["signin"]);
    });
  }

  it("refuses an organisation admin's tampered post granting a permission that is not delegatable, changing nothing", async () => {
    const application = await publishingApp();
    const organisation = await createTestOrganisation(ctx);
    const { browser } = await signedInAs(app, ctx, "organisation_admin", organisation.id, { Publisher: ["signin"] });
    const target = await createUser(ctx, { organisationId: organisation.id, permissions: { Publisher: ["signin"] } });
    const page = `/users/${target.uid}/permissions`;

    const response = await submitMany(app, browser, page, page, { permissions: [`${application.id}:editor`, `${application.id}:publisher`] });
    expect(response.statusCode).toBe(403);
    expect(await listPermissions(ctx.db, target.uid, application.id)).toEqual(["signin"]);
  });

  it("refuses organisation admins for people of other organisations", async () => {
    const application = await publishingApp();
    const mine = await createTestOrganisation(ctx);
    const other = await createTestOrganisation(ctx);
    const { browser } = await signedInAs(app, ctx, "organisation_admin", mine.id, { Publisher: ["signin"] });
    const colleague = await createUser(ctx, { organisationId: mine.id });
    const stranger = await createUser(ctx, { organisationId: other.id });
    const response = await submitMany(app, browser, `/users/${colleague.uid}/permissions`, `/users/${stranger.uid}/permissions`, {
      permissions: [`${application.id}:signin`],
    });
    expect(response.statusCode).toBe(403);
    expect(await listPermissions(ctx.db, stranger.uid, application.id)).toEqual([]);
  });

  it("answers 400 to a box that is not on the grid, changing nothing", async () => {
    const application = await publishingApp();
    const retired = (await createApp(ctx, { name: "Retired", permissions: ["x"] })).application;
    await ctx.db.update(applications).set({ retired: true }).where(eq(applications.id, retired.id));
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const target = await createUser(ctx, { permissions: { Publisher: ["signin"] } });
    const page = `/users/${target.uid}/permissions`;
    for (const bad of [`${application.id}:nonsense`, `${retired.id}:signin`, "00000000-0000-4000-8000-000000000000:signin", "garbage"]) {
      const response = await submitMany(app, browser, page, page, { permissions: [`${application.id}:editor`, bad] });
      expect(response.statusCode, bad).toBe(400);
      expect(response.body).toContain('role="alert"');
    }
    expect(await listPermissions(ctx.db, target.uid, application.id)).toEqual(["signin"]);
    const unknownField = await submitMany(app, browser, page, page, { colour: "red" });
    expect(unknownField.statusCode).toBe(400);
  });

  it("refuses a post with a missing or forged CSRF token", async () => {
    const application = await publishingApp();
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const target = await createUser(ctx);
    await browser.get(`/users/${target.uid}/permissions`);
    const missing = await browser.postForm(`/users/${target.uid}/permissions`, { permissions: `${application.id}:signin` });
    expect(missing.statusCode).toBe(403);
    expect(missing.body).toContain("This form has expired");
    const forged = await browser.postForm(`/users/${target.uid}/permissions`, { _csrf: "forged", permissions: `${application.id}:signin` });
    expect(forged.statusCode).toBe(403);
    expect(await listPermissions(ctx.db, target.uid, application.id)).toEqual([]);
  });
});
