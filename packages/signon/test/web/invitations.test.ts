import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { inviteUser, resendInvitation } from "../../src/accounts/invitations.js";
import { AccountError } from "../../src/accounts/manage-users.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { accountLinks, auditEvents, passwordHistory, users } from "../../src/db/schema.js";
import { findUserByEmail } from "../../src/repositories/users.js";
import { sha256Hex } from "../../src/security/random.js";
import { InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { linkMailedTo, mailsTo, strongPassword, textOf } from "./account-support.js";

const { database, signon } = await useTestSignon();
const origin = { ip: "192.0.2.7", userAgent: "test" };

async function invite(email = "newcomer@example.org", role: "normal" | "admin" = "normal") {
  const admin = await createUser(signon.ctx, { role: "admin" });
  const { user: invited, mailFailure } = await inviteUser(signon.ctx, { email, name: "New Comer", role, organisationId: null }, admin, origin);
  expect(mailFailure).toBeUndefined();
  return { admin, invited, link: await linkMailedTo(signon.ctx, email, "/invitations/") };
}

async function accept(browser: InjectBrowser, link: string, password: string, confirmation = password) {
  return browser.submit(link, link, { password, confirmation });
}

describe("inviteUser", () => {
  it("creates the person without a password and mails a single-use link whose token is stored only as its digest", async () => {
    const { admin, invited, link } = await invite();
    expect(invited).toMatchObject({ email: "newcomer@example.org", name: "New Comer", role: "normal", passwordHash: null });
    const mails = await mailsTo(signon.ctx, "newcomer@example.org");
    expect(mails).toHaveLength(1);
    expect(mails[0]?.subject).toBe("You have been invited to Tessera Sign-on");
    expect(mails[0]?.textBody).toContain(`${admin.name} has invited you`);
    const token = link.split("/").at(-1) as string;
    const stored = await database.db.select().from(accountLinks).where(eq(accountLinks.userUid, invited.uid));
    expect(stored).toEqual([
      expect.objectContaining({ tokenHash: sha256Hex(token), purpose: "invitation", usedAt: null, expiresAt: new Date(signon.clock.now().getTime() + 14 * 86_400_000) }),
    ]);
    const events = await database.db.select().from(auditEvents).where(eq(auditEvents.action, "user_invited"));
    expect(events).toEqual([expect.objectContaining({ actorUid: admin.uid, subjectUid: invited.uid, ip: "192.0.2.7" })]);
  });

  it("refuses a role or organisation the actor may not give, and creates nobody", async () => {
    const organisation = await createOrganisation(signon.ctx, { slug: "home-office", name: "Home Office" });
    const other = await createOrganisation(signon.ctx, { slug: "cabinet-office", name: "Cabinet Office" });
    const orgAdmin = await createUser(signon.ctx, { role: "organisation_admin", organisationId: organisation.id });
    const normal = await createUser(signon.ctx);
    // One at a time: each refusal is awaited as it comes, so none goes unhandled meanwhile.
    const attempts = [
      () => inviteUser(signon.ctx, { email: "a@example.org", name: "A", role: "admin", organisationId: organisation.id }, orgAdmin, origin),
      () => inviteUser(signon.ctx, { email: "b@example.org", name: "B", role: "normal", organisationId: other.id }, orgAdmin, origin),
      () => inviteUser(signon.ctx, { email: "c@example.org", name: "C", role: "normal", organisationId: null }, normal, origin),
    ];
    for (const attempt of attempts) await expect(attempt()).rejects.toThrow(AccountError);
    for (const email of ["a@example.org", "b@example.org", "c@example.org"]) expect(await findUserByEmail(signon.ctx.db, email)).toBeNull();
    const { user: allowed } = await inviteUser(signon.ctx, { email: "d@example.org", name: "D", role: "normal", organisationId: organisation.id }, orgAdmin, origin);
    expect(allowed.organisationId).toBe(organisation.id);
  });

  it("refuses an e-mail address that already has an account", async () => {
    const existing = await createUser(signon.ctx);
    const admin = await createUser(signon.ctx, { role: "admin" });
    await expect(inviteUser(signon.ctx, { email: existing.email.toUpperCase(), name: "X", role: "normal", organisationId: null }, admin, origin)).rejects.toThrow(
      "already exists",
    );
  });
});

describe("resendInvitation", () => {
  it("mails a new link and the old one stops working", async () => {
    const { admin, invited, link: first } = await invite();
    await resendInvitation(signon.ctx, invited.uid, admin, origin);
    const second = await linkMailedTo(signon.ctx, invited.email, "/invitations/");
    expect(second).not.toBe(first);
    const browser = new InjectBrowser(signon.app);
    expect((await browser.get(first)).statusCode).toBe(404);
    expect((await browser.get(second)).statusCode).toBe(200);
  });

  it("refuses once the person has set a password", async () => {
    const { admin, invited, link } = await invite();
    await accept(new InjectBrowser(signon.app), link, strongPassword());
    await expect(resendInvitation(signon.ctx, invited.uid, admin, origin)).rejects.toThrow("already set a password");
  });
});

describe("GET /invitations/:token", () => {
  it("shows the form to choose a password", async () => {
    const { link } = await invite();
    const page = await new InjectBrowser(signon.app).get(link);
    expect(page.statusCode).toBe(200);
    expect(page.headers["cache-control"]).toBe("no-store");
    expect(textOf(page)).toContain("Welcome, New Comer");
    expect(page.body).toContain('<label for="password">New password</label>');
    expect(page.body).toContain('<label for="confirmation">Confirm new password</label>');
  });

  it("answers 404 for an unknown or malformed link", async () => {
    const browser = new InjectBrowser(signon.app);
    const unknown = await browser.get(`/invitations/${"a".repeat(64)}`);
    expect(unknown.statusCode).toBe(404);
    expect(textOf(unknown)).toContain("This link is not valid");
    expect((await browser.get("/invitations/not-a-token")).statusCode).toBe(404);
  });

  it("answers 410 once the 14 days are over", async () => {
    const { link } = await invite();
    signon.clock.advance(14 * 86_400 - 1);
    expect((await new InjectBrowser(signon.app).get(link)).statusCode).toBe(200);
    signon.clock.advance(1);
    const expired = await new InjectBrowser(signon.app).get(link);
    expect(expired.statusCode).toBe(410);
    expect(textOf(expired)).toContain("This link has expired");
  });
});

describe("POST /invitations/:token", () => {
  it("sets the password, signs the person in and opens the dashboard", async () => {
    const { invited, link } = await invite();
    const password = strongPassword();
    const browser = new InjectBrowser(signon.app);
    const response = await accept(browser, link, password);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/");
    const dashboard = await browser.get("/");
    expect(dashboard.statusCode).toBe(200);
    expect(textOf(dashboard)).toContain("Your password is set. Welcome to Tessera Sign-on.");
    expect(textOf(dashboard)).toContain("Your applications");
    const [row] = await database.db.select().from(users).where(eq(users.uid, invited.uid));
    expect(row?.passwordChangedAt).toEqual(signon.clock.now());
    expect(await database.db.select().from(passwordHistory).where(eq(passwordHistory.userUid, invited.uid))).toHaveLength(1);
    const accepted = await database.db.select().from(auditEvents).where(eq(auditEvents.action, "invitation_accepted"));
    expect(accepted).toEqual([expect.objectContaining({ actorUid: invited.uid, subjectUid: invited.uid })]);
    await expect(signedInBrowser(signon.app, invited.email, password)).resolves.toBeInstanceOf(InjectBrowser);
  });

  it("works once: the link then answers 410", async () => {
    const { link } = await invite();
    await accept(new InjectBrowser(signon.app), link, strongPassword());
    const browser = new InjectBrowser(signon.app);
    const again = await browser.get(link);
    expect(again.statusCode).toBe(410);
    expect(textOf(again)).toContain("This link has already been used");
  });

  it("refuses a weak password next to its field and keeps the link usable", async () => {
    const { invited, link } = await invite();
    const browser = new InjectBrowser(signon.app);
    for (const weak of ["short", "password123", "newcomer2026"]) {
      const response = await accept(browser, link, weak);
      expect(response.statusCode).toBe(400);
      expect(response.body).toContain('<p class="error-message" id="password-error">');
      expect(response.body).toContain('<a href="#password">');
    }
    expect((await findUserByEmail(signon.ctx.db, invited.email))?.passwordHash).toBeNull();
    expect((await accept(browser, link, strongPassword())).statusCode).toBe(303);
  });

  it("refuses a password longer than 128 characters, and a confirmation that differs", async () => {
    const { link } = await invite();
    const browser = new InjectBrowser(signon.app);
    const long = await accept(browser, link, "correct horse battery staple ".repeat(5));
    expect(long.statusCode).toBe(400);
    expect(textOf(long)).toContain("at most 128 characters");
    const different = await accept(browser, link, strongPassword(), "something else entirely");
    expect(different.statusCode).toBe(400);
    expect(textOf(different)).toContain("The two passwords are not the same");
  });

  it("answers 400 to an oversize field and 403 without the CSRF token, and sets nothing", async () => {
    const { invited, link } = await invite();
    const browser = new InjectBrowser(signon.app);
    const oversize = await accept(browser, link, "x".repeat(1025));
    expect(oversize.statusCode).toBe(400);
    const password = strongPassword();
    const noCsrf = await browser.postForm(link, { password, confirmation: password });
    expect(noCsrf.statusCode).toBe(403);
    expect((await findUserByEmail(signon.ctx.db, invited.email))?.passwordHash).toBeNull();
  });

  it("answers 410 to an expired link and sets nothing", async () => {
    const { invited, link } = await invite();
    const browser = new InjectBrowser(signon.app);
    const page = await browser.get(link);
    const csrf = /name="_csrf" value="([^"]*)"/.exec(page.body)?.[1] ?? "";
    signon.clock.advance(14 * 86_400);
    const password = strongPassword();
    const response = await browser.postForm(link, { _csrf: csrf, password, confirmation: password });
    expect(response.statusCode).toBe(410);
    expect((await findUserByEmail(signon.ctx.db, invited.email))?.passwordHash).toBeNull();
  });
});

describe("a suspended invitation", () => {
  it("says why its link does not work, and on unsuspension mails no password reset: the invitation link works again", async () => {
    const { invited, link } = await invite("suspended-invitee@example.org");
    const admin = await createUser(signon.ctx, { role: "admin" });
    const browser = await signedInBrowser(signon.app, admin.email, defaultPassword);
    const suspended = await browser.submit(`/users/${invited.uid}`, `/users/${invited.uid}/suspend`, { reason: "Invited by mistake", confirm: "yes" });
    expect(suspended.statusCode).toBe(303);

    const refused = await new InjectBrowser(signon.app).get(link);
    expect(refused.statusCode).toBe(410);
    expect(textOf(refused)).toContain("not while the account is suspended");

    // The unsuspend form asks nothing of a password the person never set.
    const page = await browser.get(`/users/${invited.uid}`);
    expect(page.body).not.toContain('name="new_password"');
    expect(textOf(page)).toContain("They have not accepted their invitation yet");
    const lifted = await browser.submit(`/users/${invited.uid}`, `/users/${invited.uid}/unsuspend`);
    expect(lifted.statusCode).toBe(303);
    const after = textOf(await browser.get(`/users/${invited.uid}`));
    expect(after).toContain("New Comer is no longer suspended. They have not accepted their invitation yet: their link works again until it expires, or send a new one.");
    expect(after).not.toContain("old password");
    expect((await findUserByEmail(signon.ctx.db, invited.email))?.newPasswordRequired).toBe(false);
    expect((await mailsTo(signon.ctx, invited.email)).map((mail) => mail.subject)).toEqual(["You have been invited to Tessera Sign-on"]);

    const accepted = await accept(new InjectBrowser(signon.app), link, strongPassword());
    expect(accepted.statusCode).toBe(303);
  });
});
