import { and, eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { inviteUser } from "../../src/accounts/invitations.js";
import { createApiUser, suspendUser } from "../../src/accounts/manage-users.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { passwordResetPerAccountLimit } from "../../src/accounts/password-reset.js";
import { boxValue } from "../../src/accounts/permission-grid.js";
import { auditEvents, users } from "../../src/db/schema.js";
import { listPermissions } from "../../src/repositories/permissions.js";
import { findUserByEmail } from "../../src/repositories/users.js";
import { formatTime } from "../../src/time-format.js";
import { InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { buildTestSignon, testConfig, useTestSignon } from "../support/signon.js";
import { linkMailedTo, mailsTo, strongPassword, textOf } from "./account-support.js";

// The reset page answers every address alike; what differs is the mail, which goes to the account's own address.
const { database, signon } = await useTestSignon();
const withSupport = await buildTestSignon(database, testConfig({ SIGNON_SUPPORT_CONTACT: "the service desk, help@example.org or 020 7946 0000" }));
afterAll(() => withSupport.app.close());

const origin = { ip: "192.0.2.9", userAgent: "test" };

async function askForReset(email: string, app = signon.app) {
  return new InjectBrowser(app).submit("/password-reset", "/password-reset", { email });
}

/** Everything a visitor sees of the answer: status, where it leads, the body, and the page it leads to. */
async function visibleAnswer(email: string) {
  const browser = new InjectBrowser(signon.app);
  const response = await browser.submit("/password-reset", "/password-reset", { email });
  const sent = await browser.get(String(response.headers.location));
  return { status: response.statusCode, location: response.headers.location, body: response.body, page: { status: sent.statusCode, text: textOf(sent) } };
}

async function mailBodies(email: string) {
  return (await mailsTo(signon.ctx, email)).map((mail) => ({ subject: mail.subject, text: mail.textBody }));
}

async function resetRequests(userUid: string) {
  const rows = await database.db
    .select({ details: auditEvents.details })
    .from(auditEvents)
    .where(and(eq(auditEvents.action, "password_reset_requested"), eq(auditEvents.subjectUid, userUid)));
  return rows.map((row) => row.details);
}

describe("POST /password-reset for a suspended person", () => {
  it("answers as for an unknown address, and mails that the account is suspended and which of its organisation's administrators to ask, without a link", async () => {
    const department = await createOrganisation(signon.ctx, { slug: "department", name: "Department" });
    const agency = await createOrganisation(signon.ctx, { slug: "agency", name: "Agency", parentId: department.id });
    const elsewhere = await createOrganisation(signon.ctx, { slug: "elsewhere", name: "Elsewhere" });
    await createUser(signon.ctx, { name: "Olga Orgadmin", email: "olga@example.org", role: "organisation_admin", organisationId: agency.id });
    await createUser(signon.ctx, { name: "Sam Superorg", email: "sam@example.org", role: "super_organisation_admin", organisationId: department.id });
    // Not named: an organisation admin elsewhere, a suspended one, and Sign-on's administrators (the organisation has its own).
    await createUser(signon.ctx, { name: "Eve Elsewhere", email: "eve@example.org", role: "organisation_admin", organisationId: elsewhere.id });
    const gone = await createUser(signon.ctx, { name: "Gus Gone", email: "gus@example.org", role: "organisation_admin", organisationId: agency.id });
    await suspendUser(signon.ctx, gone.email, "Left");
    await createUser(signon.ctx, { name: "Ada Admin", email: "ada@example.org", role: "admin" });
    const person = await createUser(signon.ctx, { name: "Pat Person", email: "pat@example.org", organisationId: agency.id });
    await suspendUser(signon.ctx, person.email, "On leave");

    const unknown = await visibleAnswer("nobody@example.org");
    expect(await visibleAnswer(person.email)).toEqual(unknown);
    expect(unknown).toMatchObject({ status: 303, location: "/password-reset/sent", page: { status: 200 } });

    expect(await mailBodies(person.email)).toEqual([
      {
        subject: "Your Tessera Sign-on account is suspended",
        text: [
          "Hello Pat Person,",
          "",
          "Someone asked to reset the password of your Tessera Sign-on account. Your account is suspended, so it cannot be used to sign in and its password cannot be reset.",
          "",
          "Ask one of your organisation's administrators to lift the suspension:",
          "",
          "  Olga Orgadmin <olga@example.org>",
          "  Sam Superorg <sam@example.org>",
          "",
          "If you did not ask for this, you can ignore this e-mail.",
        ].join("\n"),
      },
    ]);
    expect(await resetRequests(person.uid)).toEqual([{ sent: true, mail: "suspended" }]);
    const events = await (await signedInBrowser(signon.app, "ada@example.org", defaultPassword)).get(`/users/${person.uid}/events`);
    expect(textOf(events)).toContain("Password reset requested (the account is suspended: mailed whom to ask, without a link)");
  });

  it("names Sign-on's administrators when the person's organisation has none, only superadmins for a superadmin, and the support contact configured", async () => {
    const ctx = withSupport.ctx;
    await createUser(ctx, { name: "Ada Admin", email: "ada@example.org", role: "admin" });
    await createUser(ctx, { name: "Zoe Superadmin", email: "zoe@example.org", role: "superadmin" });
    await createApiUser(ctx, { email: "robot@example.org", name: "Robot" });
    const person = await createUser(ctx, { name: "Pat Person", email: "pat@example.org" });
    const boss = await createUser(ctx, { name: "Bea Boss", email: "bea@example.org", role: "superadmin" });
    for (const email of [person.email, boss.email]) await suspendUser(ctx, email, "Left");
    for (const email of [person.email, boss.email]) expect((await askForReset(email, withSupport.app)).statusCode).toBe(303);
    const [toPerson] = await mailsTo(ctx, person.email);
    expect(toPerson?.textBody).toContain(
      [
        "Ask one of the administrators of Tessera Sign-on to lift the suspension:",
        "",
        "  Ada Admin <ada@example.org>",
        "  Zoe Superadmin <zoe@example.org>",
        "",
        "You can also contact: the service desk, help@example.org or 020 7946 0000",
        "",
      ].join("\n"),
    );
    const [toBoss] = await mailsTo(ctx, boss.email);
    expect(toBoss?.textBody).toContain("lift the suspension:\n\n  Zoe Superadmin <zoe@example.org>\n\nYou can also contact:");
    for (const mail of [toPerson, toBoss]) expect(mail?.textBody).not.toMatch(/https?:/);
  });

  it("counts these mails against the per-account limit as reset links are", async () => {
    const person = await createUser(signon.ctx);
    await suspendUser(signon.ctx, person.email, "Left");
    for (let i = 0; i < passwordResetPerAccountLimit.maxFailures + 2; i++) expect((await askForReset(person.email)).statusCode).toBe(303);
    expect(await mailsTo(signon.ctx, person.email)).toHaveLength(passwordResetPerAccountLimit.maxFailures);
    expect((await resetRequests(person.uid)).slice(-1)).toEqual([{ sent: false, reason: "too_many_requests" }]);
  });
});

describe("POST /password-reset for someone invited who has not accepted", () => {
  async function invite() {
    const inviter = await createUser(signon.ctx, { name: "Ada Admin", email: "ada@example.org", role: "admin" });
    const board = await createApp(signon.ctx, { name: "Notice board", permissions: ["poster"] });
    const invitedAt = signon.clock.now();
    const { user } = await inviteUser(
      signon.ctx,
      { email: "ivy@example.org", name: "Ivy Invitee", role: "normal", organisationId: null, permissions: [boxValue(board.application.id, "poster")] },
      inviter,
      origin,
    );
    const firstLink = await linkMailedTo(signon.ctx, user.email, "/invitations/");
    return { user, board, firstLink, invitedAt, endsAt: new Date(invitedAt.getTime() + 14 * 86_400_000) };
  }

  it("mails the invitation link again, ending when the invitation does, not a reset link; following it accepts the invitation and its permissions", async () => {
    const { user, board, firstLink, invitedAt, endsAt } = await invite();
    signon.clock.advance(3 * 86_400);
    const unknown = await visibleAnswer("nobody@example.org");
    expect(await visibleAnswer(user.email)).toEqual(unknown);

    const mails = await mailBodies(user.email);
    expect(mails.map((mail) => mail.subject)).toEqual(["You have been invited to Tessera Sign-on", "Your invitation to Tessera Sign-on"]);
    const link = await linkMailedTo(signon.ctx, user.email, "/invitations/");
    expect(mails[1]?.text).toBe(
      [
        "Hello Ivy Invitee,",
        "",
        "Someone asked to reset the password of your Tessera Sign-on account. You have not accepted your invitation yet, so there is no password to reset. Accept the invitation and choose your password here:",
        "",
        `http://localhost:3000${link}`,
        "",
        `The link works once and until ${formatTime(endsAt)}, when your invitation ends. The link in earlier invitation e-mails no longer works.`,
        "If you did not ask for this, you can ignore this e-mail.",
      ].join("\n"),
    );
    for (const mail of mails) expect(mail.text).not.toContain("/password-reset/");
    expect(await resetRequests(user.uid)).toEqual([{ sent: true, mail: "invitation" }]);
    // Asking again neither lengthens the invitation nor counts as a new one.
    expect((await findUserByEmail(signon.ctx.db, user.email))?.invitationSentAt).toEqual(invitedAt);

    const browser = new InjectBrowser(signon.app);
    expect((await browser.get(firstLink)).statusCode).toBe(404);
    const page = await browser.get(link);
    expect(page.statusCode).toBe(200);
    expect(textOf(page)).toContain("Welcome, Ivy Invitee");
    const password = strongPassword();
    const accepted = await browser.submit(link, link, { password, confirmation: password });
    expect(accepted.statusCode).toBe(303);
    expect(accepted.headers.location).toBe("/");
    expect(await listPermissions(signon.ctx.db, user.uid, board.application.id)).toContain("poster");
    expect(await database.db.select().from(auditEvents).where(eq(auditEvents.action, "invitation_accepted"))).toHaveLength(1);
  });

  it("keeps the invitation's end: the link mailed again stops working when the invitation would have", async () => {
    const { user } = await invite();
    signon.clock.advance(13 * 86_400);
    await askForReset(user.email);
    const link = await linkMailedTo(signon.ctx, user.email, "/invitations/");
    signon.clock.advance(86_400);
    expect((await new InjectBrowser(signon.app).get(link)).statusCode).toBe(410);
  });

  it("tells someone whose invitation expired whom to ask for a new one, without a link", async () => {
    const { user } = await invite();
    signon.clock.advance(15 * 86_400);
    const unknown = await visibleAnswer("nobody@example.org");
    expect(await visibleAnswer(user.email)).toEqual(unknown);
    const mails = await mailBodies(user.email);
    expect(mails.at(-1)).toEqual({
      subject: "Your invitation to Tessera Sign-on has expired",
      text: [
        "Hello Ivy Invitee,",
        "",
        "Someone asked to reset the password of your Tessera Sign-on account. You were invited but did not accept the invitation in time, so there is no password to reset and the invitation no longer works.",
        "",
        "Ask one of the administrators of Tessera Sign-on to send you a new invitation:",
        "",
        "  Ada Admin <ada@example.org>",
        "",
        "If you did not ask for this, you can ignore this e-mail.",
      ].join("\n"),
    });
    expect(await resetRequests(user.uid)).toEqual([{ sent: true, mail: "invitation_expired" }]);
  });

  it("sends the suspension mail, not the invitation, to someone invited and then suspended", async () => {
    const { user } = await invite();
    await suspendUser(signon.ctx, user.email, "Not needed after all");
    await askForReset(user.email);
    expect((await mailsTo(signon.ctx, user.email)).map((mail) => mail.subject)).toEqual(["You have been invited to Tessera Sign-on", "Your Tessera Sign-on account is suspended"]);
  });

  it("sends an ordinary reset link to someone created without a password and never invited", async () => {
    const person = await createUser(signon.ctx, { password: undefined });
    await database.db.update(users).set({ invitationSentAt: null }).where(eq(users.uid, person.uid));
    await askForReset(person.email);
    expect((await mailsTo(signon.ctx, person.email)).map((mail) => mail.subject)).toEqual(["Reset your Tessera Sign-on password"]);
  });
});
