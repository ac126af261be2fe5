import { eq } from "drizzle-orm";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { describe, expect, it } from "vitest";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { audit } from "../../src/audit.js";
import { auditEvents, passwordHistory, pushDeliveries, sessions } from "../../src/db/schema.js";
import { findUserByUid } from "../../src/repositories/users.js";
import { InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { strongPassword, textOf } from "./account-support.js";

const { database, signon } = await useTestSignon();

async function signedInPerson(options: Parameters<typeof createUser>[1] = {}) {
  const user = await createUser(signon.ctx, options);
  return { user, browser: await signedInBrowser(signon.app, user.email, defaultPassword) };
}

async function changePassword(browser: InjectBrowser, fields: { current: string; password: string; confirmation?: string }) {
  return browser.submit("/account/password", "/account/password", { confirmation: fields.password, ...fields });
}

describe("GET /account", () => {
  it("sends an anonymous visitor to sign in", async () => {
    const response = await new InjectBrowser(signon.app).get("/account");
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/sign-in?return_to=%2Faccount");
  });

  it("shows the person's details, applications and permissions, and recent activity in plain words", async () => {
    const organisation = await createOrganisation(signon.ctx, { slug: "hmrc", name: "HM Revenue & Customs" });
    const { application } = await createApp(signon.ctx, { name: "Publisher", permissions: ["editor"] });
    const { user, browser } = await signedInPerson({ role: "organisation_admin", organisationId: organisation.id, permissions: { Publisher: ["signin", "editor"] } });
    const page = await browser.get("/account");
    expect(page.statusCode).toBe(200);
    const text = textOf(page);
    expect(text).toContain(`Name ${user.name}`);
    expect(text).toContain(`E-mail address ${user.email}`);
    expect(text).toContain("Role Organisation admin");
    expect(text).toContain("Organisation HM Revenue & Customs");
    expect(text).toContain(`${application.name} editor, signin`);
    expect(text).toContain("You signed in");
    expect(text).toContain("You were given permissions (Publisher)");
    expect(page.body).toContain('<a href="/account" aria-current="page">Your account</a>');
  });

  it("shows the browser each event came from, escaped, on the account page and the older activity pages", async () => {
    const { user, browser } = await signedInPerson();
    const userAgent = "Mozilla/5.0 <b>Firefox</b>/128.0";
    for (let i = 0; i < 21; i++) {
      signon.clock.advance(1);
      await audit(signon.ctx.db, { action: "sign_in", at: signon.ctx.now(), actorUid: user.uid, subjectUid: user.uid, origin: { ip: "192.0.2.1", userAgent } });
    }
    const rows = (body: string) => [...body.matchAll(/<tr><td><time[^>]*>[^<]*<\/time><\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><\/tr>/g)].map((row) => `${row[1]} | ${row[2]}`);
    const page = await browser.get("/account");
    expect(page.body).toContain('<th scope="col">What happened</th><th scope="col">Browser</th>');
    expect(page.body).not.toContain("<b>Firefox</b>");
    expect(rows(page.body)).toEqual(Array(20).fill("You signed in | Mozilla/5.0 &lt;b&gt;Firefox&lt;/b&gt;/128.0"));

    const older = /href="(\/account\/activity\?before=\d+)" rel="next">Older activity/.exec(page.body)?.[1] as string;
    // The oldest two: the sign-in of the test's browser (light-my-request's User-Agent), and the account's creation (none).
    expect(rows((await browser.get(older)).body)).toEqual(["You signed in | Mozilla/5.0 &lt;b&gt;Firefox&lt;/b&gt;/128.0", "You signed in | lightMyRequest", "Your account was created | "]);
  });

  it("lists at most the last 20 events", async () => {
    const { browser } = await signedInPerson();
    for (let i = 0; i < 25; i++) await browser.get("/account/password");
    const user = await createUser(signon.ctx);
    for (let i = 0; i < 22; i++) await signedInBrowser(signon.app, user.email, defaultPassword);
    const own = await signedInBrowser(signon.app, user.email, defaultPassword);
    const page = await own.get("/account");
    expect([...page.body.matchAll(/<time datetime=/g)]).toHaveLength(20);
  });
});

describe("POST /account/details", () => {
  it("changes the name, audits it, tells the applications and shows a flash", async () => {
    await createApp(signon.ctx, { name: "Publisher", pushBaseUrl: "https://publisher.example" });
    const { user, browser } = await signedInPerson({ permissions: { Publisher: ["signin"] } });
    await issueOperatorToken(signon.ctx, { email: user.email, application: "Publisher" });
    await database.db.delete(pushDeliveries);

    const response = await browser.submit("/account", "/account/details", { name: "Ada Lovelace" });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/account");
    const page = await browser.get("/account");
    expect(textOf(page)).toContain("Your name has been saved.");
    expect(textOf(page)).toContain("Name Ada Lovelace");
    expect(textOf(await browser.get("/account"))).not.toContain("Your name has been saved.");

    expect(await findUserByUid(signon.ctx.db, user.uid)).toMatchObject({ name: "Ada Lovelace", email: user.email });
    const pushes = await database.db.select().from(pushDeliveries).where(eq(pushDeliveries.userUid, user.uid));
    // A new name ends no sign-in: only the update is pushed.
    expect(pushes.map((push) => push.kind)).toEqual(["update"]);
    const updated = await database.db.select().from(auditEvents).where(eq(auditEvents.action, "user_updated"));
    expect(updated).toEqual([expect.objectContaining({ actorUid: user.uid, subjectUid: user.uid, details: { changed: ["name"] } })]);
  });

  it("shows the error next to the field (400) and changes nothing; an e-mail address is not taken here", async () => {
    const { user, browser } = await signedInPerson();
    const empty = await browser.submit("/account", "/account/details", { name: "  " });
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toContain('<p class="error-message" id="name-error">Enter your name</p>');
    expect(empty.body).toContain('<a href="#name">Enter your name</a>');
    // The address changes only through /account/email, with the password and a mailed link.
    const withEmail = await browser.submit("/account", "/account/details", { name: "New name", email: "elsewhere@example.org" });
    expect(withEmail.statusCode).toBe(400);
    expect(await findUserByUid(signon.ctx.db, user.uid)).toMatchObject({ name: user.name, email: user.email });
  });

  it("answers 400 to an oversize field, 403 without the CSRF token, and sends anonymous posts to sign in", async () => {
    const { user, browser } = await signedInPerson();
    expect((await browser.submit("/account", "/account/details", { name: "n".repeat(201) })).statusCode).toBe(400);
    expect((await browser.postForm("/account/details", { name: "Changed" })).statusCode).toBe(403);
    const anonymous = await new InjectBrowser(signon.app).postForm("/account/details", { name: "Changed" });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toMatch(/^\/sign-in/);
    expect((await findUserByUid(signon.ctx.db, user.uid))?.name).toBe(user.name);
  });
});

describe("GET /account/password", () => {
  it("shows the form with current, new and confirmation fields", async () => {
    const { browser } = await signedInPerson();
    const page = await browser.get("/account/password");
    expect(page.statusCode).toBe(200);
    for (const field of ["current", "password", "confirmation"]) expect(page.body).toContain(`<label for="${field}">`);
  });
});

describe("POST /account/password", () => {
  it("changes the password, records it, ends the other sessions but not this one", async () => {
    const { user, browser } = await signedInPerson();
    const other = await signedInBrowser(signon.app, user.email, defaultPassword);
    const password = strongPassword();
    const response = await changePassword(browser, { current: defaultPassword, password });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/account");
    expect(textOf(await browser.get("/account"))).toContain("Your password has been changed.");
    expect((await other.get("/account")).statusCode).toBe(303);
    expect(await database.db.select().from(sessions).where(eq(sessions.userUid, user.uid))).toHaveLength(1);
    // The password set at creation, then the new one.
    expect(await database.db.select().from(passwordHistory).where(eq(passwordHistory.userUid, user.uid))).toHaveLength(2);
    const changed = await database.db.select().from(auditEvents).where(eq(auditEvents.action, "password_changed"));
    expect(changed).toEqual([expect.objectContaining({ actorUid: user.uid, subjectUid: user.uid })]);
    await expect(signedInBrowser(signon.app, user.email, password)).resolves.toBeInstanceOf(InjectBrowser);
  });

  it("refuses a wrong current password (400) and counts it as a failed sign-in from this address (S15)", async () => {
    const { user, browser } = await signedInPerson();
    const response = await changePassword(browser, { current: "not my password at all", password: strongPassword() });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('<p class="error-message" id="current-error">Your current password is not right</p>');
    expect(await findUserByUid(signon.ctx.db, user.uid)).toMatchObject({ passwordHash: user.passwordHash });
    for (let i = 1; i < 6; i++) await changePassword(browser, { current: `wrong guess number ${i}`, password: strongPassword() });
    // Six from this address: this address is refused for the account; the account is not locked for everyone.
    expect((await new InjectBrowser(signon.app).signIn("/sign-in", user.email, defaultPassword)).statusCode).toBe(429);
    expect((await new InjectBrowser(signon.app, { remoteAddress: "198.51.100.7" }).signIn("/sign-in", user.email, defaultPassword)).statusCode).toBe(303);
    expect((await findUserByUid(signon.ctx.db, user.uid))?.lockedAt).toBeNull();
    expect(await database.db.select().from(auditEvents).where(eq(auditEvents.action, "account_locked"))).toEqual([]);
  });

  it("refuses a weak, too short or too long password and a mismatched confirmation (400)", async () => {
    const { user, browser } = await signedInPerson();
    const cases: [Record<string, string>, string][] = [
      [{ password: "letmein12345" }, "harder to guess"],
      [{ password: "short" }, "at least 10 characters"],
      [{ password: "a quiet lantern ".repeat(9) }, "at most 128 characters"],
      [{ password: strongPassword(), confirmation: "something different" }, "The two passwords are not the same"],
      [{ password: `${user.email}!` }, "harder to guess"],
    ];
    for (const [fields, message] of cases) {
      const response = await changePassword(browser, { current: defaultPassword, password: fields.password as string, ...fields });
      expect(response.statusCode).toBe(400);
      expect(textOf(response)).toContain(message);
      // The estimator's own sentence and the page's do not end in a doubled stop.
      expect(textOf(response)).not.toMatch(/\.\./);
    }
    expect((await findUserByUid(signon.ctx.db, user.uid))?.passwordHash).toBe(user.passwordHash);
  });

  it("refuses either of the last 2 passwords, and accepts the third one back", async () => {
    const { browser } = await signedInPerson();
    const second = strongPassword();
    const third = strongPassword();
    expect((await changePassword(browser, { current: defaultPassword, password: defaultPassword })).statusCode).toBe(400);
    expect((await changePassword(browser, { current: defaultPassword, password: second })).statusCode).toBe(303);
    const reused = await changePassword(browser, { current: second, password: defaultPassword });
    expect(reused.statusCode).toBe(400);
    expect(textOf(reused)).toContain("Choose a password you have not used before");
    expect((await changePassword(browser, { current: second, password: second })).statusCode).toBe(400);
    expect((await changePassword(browser, { current: second, password: third })).statusCode).toBe(303);
    expect((await changePassword(browser, { current: third, password: second })).statusCode).toBe(400);
    expect((await changePassword(browser, { current: third, password: defaultPassword })).statusCode).toBe(303);
  });

  it("answers 400 to an oversize field and 403 without the CSRF token, and changes nothing", async () => {
    const { user, browser } = await signedInPerson();
    expect((await changePassword(browser, { current: defaultPassword, password: "z".repeat(1025) })).statusCode).toBe(400);
    const password = strongPassword();
    expect((await browser.postForm("/account/password", { current: defaultPassword, password, confirmation: password })).statusCode).toBe(403);
    expect((await findUserByUid(signon.ctx.db, user.uid))?.passwordHash).toBe(user.passwordHash);
  });
});
