import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { sessions as sessionsTable } from "../../src/db/schema.js";
import { suspendUser } from "../../src/accounts/manage-users.js";
import { InjectBrowser, parseSignInForm } from "../support/browser.js";
import { createApp, createUser, defaultPassword, lockUser } from "../support/factories.js";
import { authorizeUrl } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { signon } = await useTestSignon();

async function signInForm(browser: InjectBrowser, returnTo = "/") {
  const page = await browser.get(`/sign-in?return_to=${encodeURIComponent(returnTo)}`);
  return parseSignInForm(page.body);
}

describe("GET /sign-in", () => {
  it("is an accessible form with labels, a CSRF token and security headers", async () => {
    const response = await signon.app.inject({ method: "GET", url: "/sign-in" });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(response.body).toContain('<html lang="en">');
    expect(response.body).toContain('<label for="email">E-mail address</label>');
    expect(response.body).toContain('<label for="password">Password</label>');
    expect(response.body).toContain('autocomplete="current-password"');
    expect(parseSignInForm(response.body).csrfToken).not.toBe("");
    expect(response.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(response.headers["x-content-type-options"]).toBe("nosniff");
    expect(response.headers["referrer-policy"]).toBe("no-referrer");
    expect(response.headers["strict-transport-security"]).toBeUndefined();
  });

  it("escapes return_to in the page", async () => {
    const response = await signon.app.inject({ method: "GET", url: `/sign-in?return_to=${encodeURIComponent('/x"><script>alert(1)</script>')}` });
    expect(response.body).not.toContain("<script>alert(1)</script>");
    expect(parseSignInForm(response.body).returnTo).toBe('/x"><script>alert(1)</script>');
  });
});

describe("POST /sign-in", () => {
  it("starts a session with a new id in an HttpOnly SameSite=Lax cookie and goes back to return_to", async () => {
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    const form = await signInForm(browser, "/somewhere?x=1");
    const response = await browser.postForm("/sign-in", { _csrf: form.csrfToken, return_to: form.returnTo, email: user.email.toUpperCase(), password: defaultPassword });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/somewhere?x=1");
    const cookie = response.cookies.find((c) => c.name === "signon_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
    expect(cookie?.secure).toBeFalsy();
    expect(cookie?.value).toMatch(/^[0-9a-f]{64}$/);
  });

  it("never keeps a session id the browser brought (no fixation)", async () => {
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    const planted = "a".repeat(64);
    browser.setCookie("signon_session", planted);
    const form = await signInForm(browser);
    await browser.postForm("/sign-in", { _csrf: form.csrfToken, return_to: "/", email: user.email, password: defaultPassword });
    const firstId = browser.cookie("signon_session");
    expect(firstId).toMatch(/^[0-9a-f]{64}$/);
    expect(firstId).not.toBe(planted);

    // Signed in, the sign-in page sends the browser on: a token from a page of the session's own.
    const token = /name="_csrf" value="([^"]*)"/.exec((await browser.get("/account")).body)?.[1] ?? "";
    await browser.postForm("/sign-in", { _csrf: token, return_to: "/", email: user.email, password: defaultPassword });
    const secondId = browser.cookie("signon_session");
    expect(secondId).not.toBe(firstId);
    const withOld = await signon.app.inject({ method: "GET", url: "/", headers: { cookie: `signon_session=${String(firstId)}` } });
    expect(withOld.statusCode).toBe(303);
    expect(withOld.headers.location).toBe("/sign-in?return_to=%2F");
  });

  it("refuses a post without the CSRF token (403)", async () => {
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    await signInForm(browser);
    const response = await browser.postForm("/sign-in", { _csrf: "forged", email: user.email, password: defaultPassword });
    expect(response.statusCode).toBe(403);
    expect(response.body).toContain("This form has expired");
    expect(response.cookies.find((c) => c.name === "signon_session")).toBeUndefined();
  });

  it("shows the same message for an unknown e-mail and a wrong password", async () => {
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    const wrong = await browser.signIn("/sign-in", user.email, "not the password");
    const unknown = await browser.signIn("/sign-in", "nobody@example.org", "not the password");
    for (const response of [wrong, unknown]) {
      expect(response.statusCode).toBe(401);
      expect(response.body).toContain("The e-mail address or password is not right.");
      expect(response.body).toContain('role="alert"');
    }
  });

  it("forgets this address's wrong passwords for the account after a correct password from it", async () => {
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    for (let i = 0; i < 5; i++) await browser.signIn("/sign-in", user.email, "wrong");
    expect((await browser.signIn("/sign-in", user.email, defaultPassword)).statusCode).toBe(303);
    const another = new InjectBrowser(signon.app);
    for (let i = 0; i < 5; i++) expect((await another.signIn("/sign-in", user.email, "wrong")).statusCode).toBe(401);
    expect((await another.signIn("/sign-in", user.email, defaultPassword)).statusCode).toBe(303);
  });

  it("answers 429 after 30 failed sign-ins from one IP in 10 minutes, for any account (S15)", async () => {
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    for (let i = 0; i < 30; i++) expect((await browser.signIn("/sign-in", `nobody${i}@example.org`, "guess")).statusCode).toBe(401);
    const limited = await browser.signIn("/sign-in", user.email, defaultPassword);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBe("600");
    expect(limited.body).toContain("Too many attempts from your network");
    signon.clock.advance(600);
    expect((await browser.signIn("/sign-in", user.email, defaultPassword)).statusCode).toBe(303);
  });

  it("refuses a suspended user", async () => {
    const user = await createUser(signon.ctx);
    await suspendUser(signon.ctx, user.email, "Left");
    const response = await new InjectBrowser(signon.app).signIn("/sign-in", user.email, defaultPassword);
    expect(response.statusCode).toBe(401);
    expect(response.body).toContain("This account is suspended");
  });

  it.each(["//evil.example/x", "/\\evil.example", "https://evil.example/", "javascript:alert(1)"])("never returns to %s, only to a path here", async (returnTo) => {
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    const form = await signInForm(browser);
    const response = await browser.postForm("/sign-in", { _csrf: form.csrfToken, return_to: returnTo, email: user.email, password: defaultPassword });
    expect(response.headers.location).toBe("/");
  });
});

describe("sessions", () => {
  it("end after the idle timeout", async () => {
    const client = await createApp(signon.ctx, { name: "Publisher" });
    const user = await createUser(signon.ctx, { permissions: { Publisher: ["signin"] } });
    const browser = new InjectBrowser(signon.app);
    await browser.signIn("/sign-in", user.email, defaultPassword);
    const url = authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s" });
    signon.clock.advance(29 * 60);
    expect((await browser.get(url)).statusCode).toBe(302);
    signon.clock.advance(30 * 60);
    const afterIdle = await browser.get(url);
    expect(afterIdle.statusCode).toBe(303);
    expect(afterIdle.headers.location).toBe(`/sign-in?return_to=${encodeURIComponent(url)}`);
  });

  it("record their last use at most once a minute, so pages do not each write, and still end only after the idle timeout from it", async () => {
    const client = await createApp(signon.ctx, { name: "Publisher" });
    const user = await createUser(signon.ctx, { permissions: { Publisher: ["signin"] } });
    const browser = new InjectBrowser(signon.app);
    await browser.signIn("/sign-in", user.email, defaultPassword);
    const lastSeen = async () => (await signon.ctx.db.select({ at: sessionsTable.lastSeenAt }).from(sessionsTable).where(eq(sessionsTable.userUid, user.uid)))[0]?.at;
    const signedInAt = await lastSeen();
    const url = authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s" });

    signon.clock.advance(30);
    expect((await browser.get(url)).statusCode).toBe(302);
    expect(await lastSeen()).toEqual(signedInAt);

    signon.clock.advance(31);
    expect((await browser.get(url)).statusCode).toBe(302);
    expect(await lastSeen()).toEqual(signon.clock.now());

    signon.clock.advance(29 * 60);
    expect((await browser.get(url)).statusCode).toBe(302);
  });

  it("end at sign-out", async () => {
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    await browser.signIn("/sign-in", user.email, defaultPassword);
    const home = await browser.get("/");
    expect(home.body).toContain(`You are signed in as ${user.name}`);
    const csrfToken = /name="_csrf" value="([^"]*)"/.exec(home.body)?.[1] ?? "";
    const signedOut = await browser.postForm("/sign-out", { _csrf: csrfToken });
    expect(signedOut.statusCode).toBe(303);
    expect((await browser.get("/")).headers.location).toBe("/sign-in?return_to=%2F");
  });

  it("each begin and end with a new CSRF secret: a form loaded before is refused as expired, and one loaded after works", async () => {
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    const signedOutForm = await signInForm(browser);
    const secretBefore = browser.cookie("signon_csrf");
    const signedIn = await browser.postForm("/sign-in", { _csrf: signedOutForm.csrfToken, return_to: "/account", email: user.email, password: defaultPassword });
    expect(signedIn.statusCode).toBe(303);
    const secretAfter = browser.cookie("signon_csrf");
    expect(secretAfter).toMatch(/^[\w-]{24}$/);
    expect(secretAfter).not.toBe(secretBefore);

    // A token of the signed-out page, or a form of the signed-in one from before a sign-out and back in: expired.
    // Pages opened after the sign-in share its new secret, whichever loads first.
    const account = await browser.get("/account");
    expect(browser.cookie("signon_csrf")).toBe(secretAfter);
    const accountToken = /name="_csrf" value="([^"]*)"/.exec(account.body)?.[1] ?? "";
    const withOldToken = await browser.postForm("/account/details", { _csrf: signedOutForm.csrfToken, name: "Changed Before" });
    expect(withOldToken.statusCode).toBe(403);
    expect(withOldToken.body).toContain("This form has expired");
    expect((await browser.postForm("/sign-out", { _csrf: accountToken })).statusCode).toBe(303);
    await browser.signIn("/sign-in", user.email, defaultPassword);
    const staleForm = await browser.postForm("/account/details", { _csrf: accountToken, name: "Changed By A Stale Form" });
    expect(staleForm.statusCode).toBe(403);

    // A form loaded now works.
    const fresh = /name="_csrf" value="([^"]*)"/.exec((await browser.get("/account")).body)?.[1] ?? "";
    const saved = await browser.postForm("/account/details", { _csrf: fresh, name: "Changed Now" });
    expect(saved.statusCode).toBe(303);
  });

  it("end when the user is suspended", async () => {
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    await browser.signIn("/sign-in", user.email, defaultPassword);
    await suspendUser(signon.ctx, user.email, "Compromised");
    expect((await browser.get("/")).headers.location).toBe("/sign-in?return_to=%2F");
  });
});

describe("an administrator unlocking an account", () => {
  it("lets the user sign in again before the hour is up", async () => {
    const { unlockUser } = await import("../../src/accounts/manage-users.js");
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    await lockUser(signon.ctx, user.uid);
    const refused = await browser.signIn("/sign-in", user.email, defaultPassword);
    expect(refused.statusCode).toBe(401);
    expect(refused.body).toContain("The e-mail address or password is not right.");
    await unlockUser(signon.ctx, user.email);
    expect((await browser.signIn("/sign-in", user.email, defaultPassword)).statusCode).toBe(303);
  });

  it("lets a locked account sign in again when the hour is up", async () => {
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    await lockUser(signon.ctx, user.uid);
    expect((await browser.signIn("/sign-in", user.email, defaultPassword)).statusCode).toBe(401);
    signon.clock.advance(3600);
    expect((await browser.signIn("/sign-in", user.email, defaultPassword)).statusCode).toBe(303);
  });
});
