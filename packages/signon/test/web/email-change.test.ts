import { and, eq } from "drizzle-orm";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { describe, expect, it } from "vitest";
import { auditEvents, emailChanges, pushDeliveries, signInFailures } from "../../src/db/schema.js";
import { findUserByUid, updateUser } from "../../src/repositories/users.js";
import { sha256Hex } from "../../src/security/random.js";
import { InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { linkMailedTo, mailsTo, textOf } from "./account-support.js";
import { signedInAs } from "./users-support.js";

const { database, signon } = await useTestSignon();
const { app, ctx } = signon;

async function signedInPerson(options: Parameters<typeof createUser>[1] = {}) {
  const user = await createUser(ctx, options);
  return { user, browser: await signedInBrowser(app, user.email, defaultPassword) };
}

async function askForNewEmail(browser: InjectBrowser, email: string, current = defaultPassword) {
  return browser.submit("/account", "/account/email", { email, current });
}

async function eventsOf(uid: string, action: string) {
  return ctx.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUid, uid), eq(auditEvents.action, action)));
}

async function confirmThrough(browser: InjectBrowser, link: string) {
  return browser.submit(link, link);
}

describe("POST /account/email", () => {
  it("keeps the address, mails a link to the new address and a notice without it to the old one, and audits the request", async () => {
    const { user, browser } = await signedInPerson({ name: "Ada Lovelace" });

    const response = await askForNewEmail(browser, " ada@new.example ");

    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/account");
    const page = textOf(await browser.get("/account"));
    expect(page).toContain("We have sent a confirmation link to ada@new.example. Your e-mail address changes when you follow it.");
    expect(page).toContain(`you asked for your e-mail address to become ada@new.example`);
    expect(page).toContain(`E-mail address ${user.email}`);
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ email: user.email });

    const [confirmation] = await mailsTo(ctx, "ada@new.example");
    expect(confirmation?.subject).toBe("Confirm your new e-mail address for Tessera Sign-on");
    expect(confirmation?.textBody).toContain("(24 hours)");
    const link = await linkMailedTo(ctx, "ada@new.example", "/account/email/");
    const [notice] = await mailsTo(ctx, user.email);
    expect(notice?.subject).toBe("Your Tessera Sign-on e-mail address is about to change");
    expect(notice?.textBody).toContain("to ada@new.example");
    expect(notice?.textBody).not.toContain("/account/email/");

    // Only the digest of the token is stored.
    const [stored] = await ctx.db.select().from(emailChanges);
    expect(stored).toMatchObject({ userUid: user.uid, newEmail: "ada@new.example", requestedByUid: user.uid, confirmedAt: null });
    expect(stored?.tokenHash).toBe(sha256Hex(link.slice("/account/email/".length)));
    expect(stored?.expiresAt.getTime()).toBe(ctx.now().getTime() + 24 * 3600 * 1000);
    expect(await eventsOf(user.uid, "email_change_requested")).toEqual([
      expect.objectContaining({ actorUid: user.uid, details: { from: user.email, to: "ada@new.example" } }),
    ]);
  });

  it("refuses a wrong or missing password (400, counted as a failed sign-in) and sends nothing", async () => {
    const { user, browser } = await signedInPerson();

    const wrong = await askForNewEmail(browser, "elsewhere@example.org", "not my password");
    expect(wrong.statusCode).toBe(400);
    expect(textOf(wrong)).toContain("Your current password is not right");
    expect(wrong.body).toContain('value="elsewhere@example.org"');
    const missing = await askForNewEmail(browser, "elsewhere@example.org", "");
    expect(textOf(missing)).toContain("Enter your current password");

    expect(await mailsTo(ctx, "elsewhere@example.org")).toEqual([]);
    expect(await ctx.db.select().from(emailChanges)).toEqual([]);
    // The wrong one counts as a failed sign-in with this address (S15); the empty one does not.
    expect(await ctx.db.select().from(signInFailures)).toEqual([expect.objectContaining({ email: user.email, kind: "password", failures: 1 })]);
  });

  it("refuses a malformed address, the current one, and one another account uses (400, no mail)", async () => {
    const other = await createUser(ctx);
    const { user, browser } = await signedInPerson();

    const cases: [string, string][] = [
      ["", "Enter the new e-mail address"],
      ["not an address", "Enter an e-mail address like name@example.org"],
      [user.email.toUpperCase(), "This is already the account's e-mail address"],
      [other.email.toUpperCase(), "Another account already uses this e-mail address"],
    ];
    for (const [email, message] of cases) {
      const response = await askForNewEmail(browser, email);
      expect(response.statusCode).toBe(400);
      expect(textOf(response)).toContain(message);
    }
    expect(await mailsTo(ctx, other.email)).toEqual([]);
    expect(await ctx.db.select().from(emailChanges)).toEqual([]);
  });

  it("answers 400 to an oversize field, 403 without the CSRF token, and sends anonymous posts to sign in", async () => {
    const { browser } = await signedInPerson();
    expect((await askForNewEmail(browser, `${"a".repeat(250)}@example.org`)).statusCode).toBe(400);
    expect((await browser.postForm("/account/email", { email: "x@example.org", current: defaultPassword })).statusCode).toBe(403);
    const anonymous = await new InjectBrowser(app).postForm("/account/email", { email: "x@example.org", current: defaultPassword });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe("/sign-in?return_to=%2F");
    expect(await ctx.db.select().from(emailChanges)).toEqual([]);
  });

  it("replaces an earlier pending change: the earlier link stops working", async () => {
    const { user, browser } = await signedInPerson();
    await askForNewEmail(browser, "first@example.org");
    const first = await linkMailedTo(ctx, "first@example.org", "/account/email/");
    await askForNewEmail(browser, "second@example.org");
    const second = await linkMailedTo(ctx, "second@example.org", "/account/email/");

    expect((await browser.get(first)).statusCode).toBe(404);
    expect(textOf(await browser.get("/account"))).toContain("to become second@example.org");
    expect((await confirmThrough(browser, second)).statusCode).toBe(303);
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ email: "second@example.org" });
  });
});

describe("POST /account/email/cancel", () => {
  it("drops the pending change, audited; its link no longer works", async () => {
    const { user, browser } = await signedInPerson();
    await askForNewEmail(browser, "gone@example.org");
    const link = await linkMailedTo(ctx, "gone@example.org", "/account/email/");

    const response = await browser.submit("/account", "/account/email/cancel");

    expect(response.statusCode).toBe(303);
    const page = textOf(await browser.get("/account"));
    expect(page).toContain("The change of your e-mail address is cancelled");
    expect(page).not.toContain("Waiting for confirmation");
    expect((await browser.get(link)).statusCode).toBe(404);
    expect(await eventsOf(user.uid, "email_change_cancelled")).toEqual([
      expect.objectContaining({ actorUid: user.uid, details: { from: user.email, to: "gone@example.org" } }),
    ]);
    expect((await browser.postForm("/account/email/cancel", {})).statusCode).toBe(403);
  });
});

describe("GET and POST /account/email/:token", () => {
  it("asks the signed-in person to confirm, then changes the address, pushes, audits and ends their other sign-ins", async () => {
    await createApp(ctx, { name: "Publisher", pushBaseUrl: "https://publisher.example" });
    const { user, browser } = await signedInPerson({ permissions: { Publisher: ["signin"] } });
    await issueOperatorToken(ctx, { email: user.email, application: "Publisher" });
    const elsewhere = await signedInBrowser(app, user.email, defaultPassword);
    await askForNewEmail(browser, "ada@new.example");
    const link = await linkMailedTo(ctx, "ada@new.example", "/account/email/");
    await database.db.delete(pushDeliveries);

    const page = await browser.get(link);
    expect(page.statusCode).toBe(200);
    expect(textOf(page)).toContain(`changes from ${user.email} to ada@new.example`);
    // Looking at the link changes nothing: a mail scanner may fetch it.
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ email: user.email });

    const confirmed = await confirmThrough(browser, link);
    expect(confirmed.statusCode).toBe(303);
    expect(confirmed.headers.location).toBe("/account");
    expect(textOf(await browser.get("/account"))).toContain("Your e-mail address is now ada@new.example.");
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ email: "ada@new.example" });
    expect((await elsewhere.get("/account")).statusCode).toBe(303);

    const pushes = await database.db.select().from(pushDeliveries).where(eq(pushDeliveries.userUid, user.uid));
    expect(pushes.sort((a, b) => a.seq - b.seq).map((push) => push.kind)).toEqual(["update", "reauth"]);
    expect(await eventsOf(user.uid, "email_change_confirmed")).toEqual([
      expect.objectContaining({ actorUid: user.uid, details: { from: user.email, to: "ada@new.example", through: "link", requested_by: user.uid } }),
    ]);
    expect(await eventsOf(user.uid, "sign_in_tokens_revoked")).toEqual([expect.objectContaining({ details: expect.objectContaining({ cause: "email_changed" }) })]);

    // Single use; the new address signs in, the old one no longer does.
    expect((await browser.get(link)).statusCode).toBe(410);
    expect((await confirmThrough(browser, link)).statusCode).toBe(410);
    expect((await new InjectBrowser(app).signIn("/account", "ada@new.example", defaultPassword)).statusCode).toBe(303);
  });

  it("sends a visitor who is not signed in to sign in, and back to the link afterwards", async () => {
    const { user, browser } = await signedInPerson();
    await askForNewEmail(browser, "later@example.org");
    const link = await linkMailedTo(ctx, "later@example.org", "/account/email/");

    const visitor = new InjectBrowser(app);
    const first = await visitor.get(link);
    expect(first.statusCode).toBe(303);
    expect(first.headers.location).toBe(`/sign-in?return_to=${encodeURIComponent(link)}`);
    const signedIn = await visitor.signIn(link, user.email, defaultPassword);
    expect(signedIn.headers.location).toBe(link);
    expect((await confirmThrough(visitor, link)).statusCode).toBe(303);
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ email: "later@example.org" });
  });

  it("refuses someone signed in as another person (403) and changes nothing", async () => {
    const { user, browser } = await signedInPerson();
    await askForNewEmail(browser, "mine@example.org");
    const link = await linkMailedTo(ctx, "mine@example.org", "/account/email/");
    const { browser: stranger } = await signedInPerson();

    const page = await stranger.get(link);
    expect(page.statusCode).toBe(403);
    expect(textOf(page)).toContain("This link is for another account");
    const token = /name="_csrf" value="([^"]*)"/.exec((await stranger.get("/account")).body)?.[1] ?? "";
    expect((await stranger.postForm(link, { _csrf: token })).statusCode).toBe(403);
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ email: user.email });
  });

  it("answers 410 after 24 hours and 404 for an unknown token", async () => {
    const { user, browser } = await signedInPerson();
    await askForNewEmail(browser, "slow@example.org");
    const link = await linkMailedTo(ctx, "slow@example.org", "/account/email/");
    signon.clock.advance(24 * 3600);
    // The session has ended by now too: a fresh sign-in.
    const later = await signedInBrowser(app, user.email, defaultPassword);

    expect((await later.get(link)).statusCode).toBe(410);
    expect((await confirmThrough(later, link)).statusCode).toBe(410);
    expect((await later.get(`/account/email/${"0".repeat(64)}`)).statusCode).toBe(404);
    expect((await later.get("/account/email/not-a-token")).statusCode).toBe(404);
    expect(textOf(await later.get("/account"))).not.toContain("Waiting for confirmation");
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ email: user.email });
  });

  it("refuses (409, no 500) when another account took the address after the request", async () => {
    const { user, browser } = await signedInPerson();
    await askForNewEmail(browser, "contested@example.org");
    const link = await linkMailedTo(ctx, "contested@example.org", "/account/email/");
    const other = await createUser(ctx);
    await updateUser(ctx.db, other.uid, { email: "Contested@example.org", updatedAt: ctx.now() });

    const response = await confirmThrough(browser, link);

    expect(response.statusCode).toBe(409);
    expect(textOf(response)).toContain("This e-mail address is taken");
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ email: user.email });
    expect(await eventsOf(user.uid, "email_change_confirmed")).toEqual([]);
  });
});

describe("POST /users/:uid with a new e-mail address", () => {
  function editFields(user: { name: string; email: string; role: string; organisationId: string | null }) {
    return { name: user.name, email: user.email, role: user.role, organisation: user.organisationId ?? "" };
  }

  it("saves the other changes at once and mails a confirmation link to the new address; the person confirms it", async () => {
    const { browser: admin, uid: adminUid } = await signedInAs(app, ctx, "admin");
    const { user, browser } = await signedInPerson({ name: "Grace Hopper" });

    const response = await admin.submit(`/users/${user.uid}`, `/users/${user.uid}`, { ...editFields(user), name: "Grace B. Hopper", email: "grace@new.example" });

    expect(response.statusCode).toBe(303);
    const page = textOf(await admin.get(`/users/${user.uid}`));
    expect(page).toContain("A confirmation link was sent to grace@new.example; the e-mail address changes when Grace B. Hopper follows it.");
    expect(page).toContain("Waiting for confirmation: to grace@new.example");
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ name: "Grace B. Hopper", email: user.email });
    expect((await mailsTo(ctx, user.email)).at(-1)?.textBody).toContain("An administrator asked to change");
    expect(await eventsOf(user.uid, "email_change_requested")).toEqual([expect.objectContaining({ actorUid: adminUid })]);
    expect(textOf(await browser.get("/account"))).toContain("an administrator asked for your e-mail address to become grace@new.example");

    const link = await linkMailedTo(ctx, "grace@new.example", "/account/email/");
    expect((await confirmThrough(browser, link)).statusCode).toBe(303);
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ email: "grace@new.example" });
    expect(await eventsOf(user.uid, "email_change_confirmed")).toEqual([
      expect.objectContaining({ actorUid: user.uid, details: expect.objectContaining({ through: "link", requested_by: adminUid }) }),
    ]);
  });

  it("applies the address at once when the administrator confirmed it out of band, audited as such", async () => {
    const { browser: admin, uid: adminUid } = await signedInAs(app, ctx, "admin");
    const { user, browser } = await signedInPerson();
    await askForNewEmail(browser, "pending@example.org");
    const pendingLink = await linkMailedTo(ctx, "pending@example.org", "/account/email/");

    const response = await admin.submit(`/users/${user.uid}`, `/users/${user.uid}`, { ...editFields(user), email: "oob@example.org", email_confirmed_out_of_band: "yes" });

    expect(response.statusCode).toBe(303);
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ email: "oob@example.org" });
    expect(await mailsTo(ctx, "oob@example.org")).toEqual([]);
    expect(await eventsOf(user.uid, "email_change_confirmed")).toEqual([
      expect.objectContaining({ actorUid: adminUid, details: { from: user.email, to: "oob@example.org", through: "out_of_band" } }),
    ]);
    expect(textOf(await admin.get(`/users/${user.uid}/events`))).toContain("confirmed out of band, without a link");
    // Every sign-in of the person ended; the change they had asked for is replaced, its link no longer works.
    expect((await browser.get("/account")).statusCode).toBe(303);
    expect(await ctx.db.select().from(emailChanges).where(eq(emailChanges.userUid, user.uid))).toEqual([]);
    const owner = await signedInBrowser(app, "oob@example.org", defaultPassword);
    expect((await owner.get(pendingLink)).statusCode).toBe(404);
  });

  it("refuses an address another account uses, with or without the out-of-band box (400, nothing changes)", async () => {
    const { browser: admin } = await signedInAs(app, ctx, "admin");
    const user = await createUser(ctx, { name: "Kept" });
    const taken = await createUser(ctx);

    const byLink = await admin.submit(`/users/${user.uid}`, `/users/${user.uid}`, { ...editFields(user), name: "Changed", email: taken.email.toUpperCase() });
    expect(byLink.statusCode).toBe(400);
    expect(textOf(byLink)).toContain("Another account already uses this e-mail address");
    const outOfBand = await admin.submit(`/users/${user.uid}`, `/users/${user.uid}`, { ...editFields(user), email: taken.email, email_confirmed_out_of_band: "yes" });
    expect(outOfBand.statusCode).toBe(400);
    expect(textOf(outOfBand)).toContain("already exists");

    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ name: "Kept", email: user.email });
    expect(await mailsTo(ctx, taken.email)).toEqual([]);
  });

  it("changes the case of the same address at once, without a link", async () => {
    const { browser: admin } = await signedInAs(app, ctx, "admin");
    const user = await createUser(ctx, { email: "mixed.case@example.org" });

    const response = await admin.submit(`/users/${user.uid}`, `/users/${user.uid}`, { ...editFields(user), email: "Mixed.Case@example.org" });

    expect(response.statusCode).toBe(303);
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ email: "Mixed.Case@example.org" });
    expect(await mailsTo(ctx, "Mixed.Case@example.org")).toEqual([]);
    expect(await eventsOf(user.uid, "email_change_confirmed")).toEqual([expect.objectContaining({ details: expect.objectContaining({ through: "case_only" }) })]);
  });

  it("sends administrators to their account page for their own address", async () => {
    const { browser: admin, uid } = await signedInAs(app, ctx, "admin");
    const self = await findUserByUid(ctx.db, uid);
    if (!self) throw new Error("no admin");
    const response = await admin.submit(`/users/${uid}`, `/users/${uid}`, { ...editFields(self), email: "me@new.example", email_confirmed_out_of_band: "yes" });
    expect(response.statusCode).toBe(400);
    expect(textOf(response)).toContain("Change your own e-mail address on your account page, with your password");
    expect(await findUserByUid(ctx.db, uid)).toMatchObject({ email: self.email });
  });

  it("lets the administrator cancel the pending change", async () => {
    const { browser: admin, uid: adminUid } = await signedInAs(app, ctx, "admin");
    const user = await createUser(ctx);
    await admin.submit(`/users/${user.uid}`, `/users/${user.uid}`, { ...editFields(user), email: "cancel.me@example.org" });
    const link = await linkMailedTo(ctx, "cancel.me@example.org", "/account/email/");

    const response = await admin.submit(`/users/${user.uid}`, `/users/${user.uid}/cancel-email-change`);

    expect(response.statusCode).toBe(303);
    expect(textOf(await admin.get(`/users/${user.uid}`))).not.toContain("Waiting for confirmation");
    expect(await eventsOf(user.uid, "email_change_cancelled")).toEqual([expect.objectContaining({ actorUid: adminUid })]);
    const owner = await signedInBrowser(app, user.email, defaultPassword);
    expect((await owner.get(link)).statusCode).toBe(404);
  });
});
