import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { inviteUser } from "../../src/accounts/invitations.js";
import { auditEvents } from "../../src/db/schema.js";
import { findUserByUid } from "../../src/repositories/users.js";
import { InjectBrowser } from "../support/browser.js";
import { createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { linkMailedTo, mailsTo, textOf } from "./account-support.js";
import { createTestOrganisation, signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;
const origin = { ip: "192.0.2.9", userAgent: "cli" };

/** Someone invited by a fresh administrator, optionally into an organisation. */
async function invited(organisationId: string | null = null) {
  const inviter = await createUser(ctx, { role: "admin" });
  const { user } = await inviteUser(ctx, { email: `invited-${crypto.randomUUID()}@example.org`, name: "Invited Person", role: "normal", organisationId }, inviter, origin);
  return user;
}

describe("GET /users/:uid: the Resend invitation form", () => {
  it("is shown for someone who has not chosen a password yet, and not for someone who has", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const person = await invited();
    const page = await browser.get(`/users/${person.uid}`);
    expect(page.body).toContain(`<form method="post" action="/users/${person.uid}/resend-invitation">`);
    expect(page.body).toContain('<button type="submit" class="secondary">Resend invitation</button>');
    const active = await createUser(ctx);
    expect((await browser.get(`/users/${active.uid}`)).body).not.toContain("resend-invitation");
  });
});

describe("POST /users/:uid/resend-invitation", () => {
  it("mails a new link, the earlier one stops working, and the audit event records who and from where", async () => {
    const { browser, uid: actorUid } = await signedInAs(app, ctx, "admin");
    const person = await invited();
    const firstLink = await linkMailedTo(ctx, person.email, "/invitations/");
    const page = `/users/${person.uid}`;

    const response = await browser.submit(page, `${page}/resend-invitation`);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(page);
    expect(textOf(await browser.get(page))).toContain(`A new invitation is sent to ${person.email}.`);
    expect(await mailsTo(ctx, person.email)).toHaveLength(2);
    const secondLink = await linkMailedTo(ctx, person.email, "/invitations/");
    expect(secondLink).not.toBe(firstLink);
    expect((await new InjectBrowser(app).get(firstLink)).statusCode).not.toBe(200);
    expect((await new InjectBrowser(app).get(secondLink)).statusCode).toBe(200);

    const events = await ctx.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "user_invited"), eq(auditEvents.actorUid, actorUid)));
    expect(events).toEqual([expect.objectContaining({ subjectUid: person.uid, ip: "127.0.0.1", userAgent: "lightMyRequest", details: { role: "normal", resent: true } })]);
  });

  it("refuses someone who has already chosen a password (400, no mail)", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const active = await createUser(ctx);
    const page = `/users/${active.uid}`;
    const response = await browser.submit(page, `${page}/resend-invitation`);
    expect(response.statusCode).toBe(400);
    expect(textOf(response)).toContain(`${active.email} has already set a password`);
    expect(await mailsTo(ctx, active.email)).toHaveLength(0);
  });

  it("is refused (403) to a normal user and to an organisation admin for someone outside their organisation, and sends nothing", async () => {
    const organisation = await createTestOrganisation(ctx);
    const person = await invited();
    const page = `/users/${person.uid}`;
    const admin = await signedInAs(app, ctx, "admin");
    const token = /name="_csrf" value="([^"]*)"/.exec((await admin.browser.get(page)).body)?.[1] ?? "";
    for (const role of ["normal", "organisation_admin"] as const) {
      const { browser } = await signedInAs(app, ctx, role, organisation.id);
      expect((await browser.get(page)).statusCode).toBe(403);
      const own = /name="_csrf" value="([^"]*)"/.exec((await browser.get("/account")).body)?.[1] ?? token;
      const refused = await browser.postForm(`${page}/resend-invitation`, { _csrf: own });
      expect(refused.statusCode).toBe(403);
    }
    expect(await mailsTo(ctx, person.email)).toHaveLength(1);
  });

  it("lets an organisation admin resend for someone invited into their organisation", async () => {
    const organisation = await createTestOrganisation(ctx);
    const person = await invited(organisation.id);
    const { browser } = await signedInAs(app, ctx, "organisation_admin", organisation.id);
    const page = `/users/${person.uid}`;
    expect((await browser.submit(page, `${page}/resend-invitation`)).statusCode).toBe(303);
    expect(await mailsTo(ctx, person.email)).toHaveLength(2);
  });

  it("refuses a form with a wrong CSRF token (403), and sends nothing", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const person = await invited();
    expect((await browser.postForm(`/users/${person.uid}/resend-invitation`, { _csrf: "not-the-token" })).statusCode).toBe(403);
    expect(await mailsTo(ctx, person.email)).toHaveLength(1);
    expect((await findUserByUid(ctx.db, person.uid))?.passwordHash).toBeNull();
  });
});
