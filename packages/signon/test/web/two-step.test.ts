import { and, eq } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import { describe, expect, it } from "vitest";
import { unlockUser } from "../../src/accounts/manage-users.js";
import { resetTwoStep } from "../../src/accounts/two-step.js";
import { auditEvents, rememberedBrowsers, sessions, signInFailures } from "../../src/db/schema.js";
import { findUserByUid, type User } from "../../src/repositories/users.js";
import { sha256Hex } from "../../src/security/random.js";
import { openSecret } from "../../src/security/secret-box.js";
import { InjectBrowser, parseSignInForm, signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword, lockUser } from "../support/factories.js";
import { authorizeUrl } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { signon } = await useTestSignon();
const origin = { ip: "192.0.2.1", userAgent: "test" };
const day = 24 * 3600;

/** The code an authenticator app with this secret shows at the test clock's time, `stepsLater` steps on. */
function codeFor(secret: string, stepsLater = 0): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: signon.clock.now().getTime() + stepsLater * 30_000 });
}

function secretShownOn(html: string): string {
  const shown = /<p class="secret" id="secret">([A-Z2-7 ]+)<\/p>/.exec(html)?.[1];
  if (shown === undefined) throw new Error(`no secret on the page:\n${html}`);
  return shown.replace(/ /g, "");
}

async function reload(user: User): Promise<User> {
  const fresh = await findUserByUid(signon.ctx.db, user.uid);
  if (!fresh) throw new Error("user gone");
  return fresh;
}

/** The wrong 2-step codes counted for the user's address from the test browsers' address (S15). */
async function codeFailures(user: User): Promise<number> {
  const rows = await signon.ctx.db
    .select({ failures: signInFailures.failures })
    .from(signInFailures)
    .where(and(eq(signInFailures.email, user.email.toLowerCase()), eq(signInFailures.source, "127.0.0.1"), eq(signInFailures.kind, "two_step_code")));
  return rows[0]?.failures ?? 0;
}

async function actionsOf(user: User): Promise<string[]> {
  const rows = await signon.ctx.db.select({ action: auditEvents.action }).from(auditEvents).where(eq(auditEvents.subjectUid, user.uid)).orderBy(auditEvents.id);
  return rows.map((row) => row.action);
}

/** A user who set up 2-step verification through the page; returns the secret, with the clock moved past the confirming code. */
async function userWithTwoStep(options: Parameters<typeof createUser>[1] = {}): Promise<{ user: User; secret: string }> {
  const user = await createUser(signon.ctx, options);
  const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
  const secret = secretShownOn((await browser.get("/account/two-step")).body);
  const confirmed = await browser.submit("/account/two-step", "/account/two-step", { code: codeFor(secret) });
  expect(confirmed.statusCode).toBe(303);
  signon.clock.advance(30);
  return { user: await reload(user), secret };
}

/** Signs in with the password and lands on the code page; returns the browser and the response to the password post. */
async function passwordStep(user: User, url = "/sign-in?return_to=%2Faccount%2Ftwo-step", browser = new InjectBrowser(signon.app)) {
  const response = await browser.signIn(url, user.email, defaultPassword);
  return { browser, response };
}

async function enterCode(browser: InjectBrowser, fields: Record<string, string>, returnTo = "/account/two-step") {
  return browser.submit(`/sign-in/two-step?return_to=${encodeURIComponent(returnTo)}`, "/sign-in/two-step", { return_to: returnTo, ...fields });
}

describe("GET /account/two-step", () => {
  it("sends a browser that is not signed in to the sign-in page", async () => {
    const response = await signon.app.inject({ method: "GET", url: "/account/two-step" });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/sign-in?return_to=%2Faccount%2Ftwo-step");
  });

  it("shows a QR code and the key, the same on every visit until confirmed, and stores the secret sealed only", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const page = await browser.get("/account/two-step");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("<svg");
    expect(page.body).toContain('role="img" aria-label="QR code');
    expect(page.body).toContain('autocomplete="one-time-code"');
    const secret = secretShownOn(page.body);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(secretShownOn((await browser.get("/account/two-step")).body)).toBe(secret);

    const stored = await reload(user);
    expect(stored.otpEnabledAt).toBeNull();
    expect(stored.otpSecretEncrypted).not.toContain(secret);
    expect(openSecret(Buffer.from("5e".repeat(32), "hex"), stored.otpSecretEncrypted as string)).toBe(secret);
  });
});

describe("POST /account/two-step", () => {
  it("turns 2-step verification on with a code from the secret shown", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const secret = secretShownOn((await browser.get("/account/two-step")).body);
    const response = await browser.submit("/account/two-step", "/account/two-step", { code: codeFor(secret) });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/account/two-step");
    const page = await browser.get("/account/two-step");
    expect(page.body).toContain("2-step verification is on");
    expect(page.body).toContain("On since");
    expect(page.body).not.toContain("<svg");
    expect(page.body).not.toContain(secret.replace(/(.{4})/g, "$1 ").trim());
    // The answer was a redirect: reloading the page shows it without posting the code again, and the message once.
    expect(page.body).toContain("2-step verification is on. You will enter a code when you sign in.");
    const reloaded = await browser.get("/account/two-step");
    expect(reloaded.body).toContain("On since");
    expect(reloaded.body).not.toContain("You will enter a code when you sign in.");

    const stored = await reload(user);
    expect(stored.otpEnabledAt).toEqual(signon.clock.now());
    expect(stored.lastOtpStep).toBe(TOTP.counter({ timestamp: signon.clock.now().getTime() }));
    expect(await actionsOf(user)).toContain("two_step_enabled");
  });

  it("accepts the code of the previous or next 30 seconds, not two steps away", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const secret = secretShownOn((await browser.get("/account/two-step")).body);
    const tooLate = await browser.submit("/account/two-step", "/account/two-step", { code: codeFor(secret, -2) });
    expect(tooLate.statusCode).toBe(400);
    expect(tooLate.body).toContain("The code is not right");
    expect((await reload(user)).otpEnabledAt).toBeNull();
    const previous = await browser.submit("/account/two-step", "/account/two-step", { code: codeFor(secret, -1) });
    expect(previous.statusCode).toBe(303);
    expect((await reload(user)).otpEnabledAt).not.toBeNull();
  });

  it.each([
    ["a code with letters", "12345a"],
    ["a code too short", "12345"],
    ["an empty code", ""],
  ])("answers %s with the form and an error next to the field (400)", async (_name, code) => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const response = await browser.submit("/account/two-step", "/account/two-step", { code });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('<a href="#code">Enter the 6-digit code');
    expect(response.body).toContain('aria-describedby="code-error"');
    expect((await reload(user)).otpEnabledAt).toBeNull();
  });

  it("answers an oversized code or an unknown field with a 400 page", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    for (const fields of [{ code: "1".repeat(33) }, { code: "123456", extra: "x" }]) {
      const response = await browser.submit("/account/two-step", "/account/two-step", fields);
      expect(response.statusCode).toBe(400);
      expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
    }
  });

  it("refuses a post without a valid CSRF token (403) and changes nothing", async () => {
    const user = await createUser(signon.ctx);
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    const secret = secretShownOn((await browser.get("/account/two-step")).body);
    for (const token of ["", "forged"]) {
      const response = await browser.postForm("/account/two-step", { _csrf: token, code: codeFor(secret) });
      expect(response.statusCode).toBe(403);
    }
    expect((await reload(user)).otpEnabledAt).toBeNull();
  });

  it("does nothing for a browser that is not signed in", async () => {
    const browser = new InjectBrowser(signon.app);
    const response = await browser.submit("/sign-in", "/account/two-step", { code: "123456" });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toMatch(/^\/sign-in\?return_to=/);
  });
});

describe("signing in with 2-step verification", () => {
  it("asks for the code after the password, signs nobody in until then, and completes with a new session id", async () => {
    const { user, secret } = await userWithTwoStep();
    const signInsBefore = (await actionsOf(user)).filter((action) => action === "sign_in").length;
    const { browser, response } = await passwordStep(user);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/sign-in/two-step?return_to=%2Faccount%2Ftwo-step");
    const halfSignedIn = browser.cookie("signon_session");

    const blocked = await browser.get("/account/two-step");
    expect(blocked.statusCode).toBe(303);
    expect(blocked.headers.location).toBe("/sign-in/two-step?return_to=%2Faccount%2Ftwo-step");
    const form = await browser.get(blocked.headers.location as string);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('name="return_to" value="/account/two-step"');
    expect(form.body).toContain("Remember this browser for 30 days");

    const done = await enterCode(browser, { code: codeFor(secret) });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe("/account/two-step");
    expect(browser.cookie("signon_session")).not.toBe(halfSignedIn);
    expect(browser.cookie("signon_remembered")).toBeUndefined();
    expect((await browser.get("/account/two-step")).statusCode).toBe(200);

    const [oldSession] = await signon.ctx.db.select().from(sessions).where(eq(sessions.idHash, sha256Hex(halfSignedIn as string)));
    expect(oldSession).toBeUndefined();
    const stored = await reload(user);
    expect(stored.lastSignedInAt).toEqual(signon.clock.now());
    const actions = await actionsOf(user);
    expect(actions.slice(-2)).toEqual(["two_step_verified", "sign_in"]);
    expect(actions.filter((action) => action === "sign_in")).toHaveLength(signInsBefore + 1);
  });

  it("sends a browser without a half-signed-in session to the sign-in page", async () => {
    const response = await signon.app.inject({ method: "GET", url: "/sign-in/two-step?return_to=%2Fx" });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/sign-in?return_to=%2Fx");
  });

  it("does not ask users without 2-step verification", async () => {
    const user = await createUser(signon.ctx);
    const { response } = await passwordStep(user);
    expect(response.headers.location).toBe("/account/two-step");
  });

  it("refuses a wrong code (401), counts it and records it", async () => {
    const { user, secret } = await userWithTwoStep();
    const { browser } = await passwordStep(user);
    const wrong = String((Number(codeFor(secret)) + 1) % 1_000_000).padStart(6, "0");
    const response = await enterCode(browser, { code: wrong });
    expect(response.statusCode).toBe(401);
    expect(response.body).toContain("The code is not right");
    expect(await codeFailures(user)).toBe(1);
    expect(await actionsOf(user)).toContain("two_step_failed");
    expect((await browser.get("/account/two-step")).statusCode).toBe(303);

    const right = await enterCode(browser, { code: codeFor(secret) });
    expect(right.statusCode).toBe(303);
    expect(await codeFailures(user)).toBe(0);
  });

  it("refuses a code used before (same time step)", async () => {
    const { user, secret } = await userWithTwoStep();
    const first = await passwordStep(user);
    const code = codeFor(secret);
    expect((await enterCode(first.browser, { code })).statusCode).toBe(303);

    const second = await passwordStep(user);
    const replayed = await enterCode(second.browser, { code });
    expect(replayed.statusCode).toBe(401);
    expect(replayed.body).toContain("used already");
    expect(await codeFailures(user)).toBe(1);
    signon.clock.advance(30);
    expect((await enterCode(second.browser, { code: codeFor(secret) })).statusCode).toBe(303);
  });

  it("refuses this address for the account after 10 wrong codes (429, too many tries and when to try again), ends the half-signed-in session, and unlocking clears the count", async () => {
    const { user, secret } = await userWithTwoStep();
    const { browser } = await passwordStep(user);
    const halfSignedIn = sha256Hex(browser.cookie("signon_session") as string);
    const wrong = String((Number(codeFor(secret)) + 500_000) % 1_000_000).padStart(6, "0");
    for (let attempt = 1; attempt <= 9; attempt++) expect((await enterCode(browser, { code: wrong })).statusCode).toBe(401);
    const refusing = await enterCode(browser, { code: wrong });
    expect(refusing.statusCode).toBe(429);
    expect(refusing.headers["retry-after"]).toBe("3600");
    const tooManyTries = `There have been too many tries to sign in with this e-mail address from your network. Try again after ${new Date(Math.ceil((signon.clock.now().getTime() + 3_600_000) / 60_000) * 60_000).toISOString().slice(0, 16).replace("T", " ")} UTC (in 60 minutes).`;
    expect(refusing.body).toContain(tooManyTries);
    expect(await codeFailures(user)).toBe(10);
    // Ten failures from one address refuse that address; the account is not locked for everyone.
    expect((await reload(user)).lockedAt).toBeNull();
    expect(await signon.ctx.db.select().from(sessions).where(eq(sessions.idHash, halfSignedIn))).toEqual([]);
    expect(browser.cookie("signon_session")).toBeUndefined();
    // The sign-in form of that page holds a token of the browser's new CSRF secret (the session ended): posted, it
    // is refused for the address, not as an expired form.
    const form = parseSignInForm(refusing.body);
    const reposted = await browser.postForm("/sign-in", { _csrf: form.csrfToken, return_to: form.returnTo, email: user.email, password: defaultPassword });
    expect(reposted.statusCode).toBe(429);

    const again = await passwordStep(user);
    expect(again.response.statusCode).toBe(429);
    expect(again.response.body).toContain(tooManyTries);
    const elsewhere = await new InjectBrowser(signon.app, { remoteAddress: "198.51.100.7" }).signIn("/sign-in?return_to=%2F", user.email, defaultPassword);
    expect(elsewhere.headers.location).toBe("/sign-in/two-step?return_to=%2F");

    await unlockUser(signon.ctx, user.email);
    expect(await codeFailures(user)).toBe(0);
    const after = await passwordStep(user);
    expect((await enterCode(after.browser, { code: codeFor(secret) })).statusCode).toBe(303);
  });

  it("counts wrong codes from every address towards the account lock: 30 in an hour lock it for everyone", async () => {
    const { user, secret } = await userWithTwoStep();
    const wrong = String((Number(codeFor(secret)) + 500_000) % 1_000_000).padStart(6, "0");
    for (const address of ["203.0.113.1", "203.0.113.2", "203.0.113.3"]) {
      const { browser } = await passwordStep(user, undefined, new InjectBrowser(signon.app, { remoteAddress: address }));
      for (let attempt = 1; attempt <= 9; attempt++) expect((await enterCode(browser, { code: wrong })).statusCode).toBe(401);
      expect((await enterCode(browser, { code: wrong })).statusCode).toBe(429);
    }
    expect((await reload(user)).lockedAt).toEqual(signon.clock.now());
    expect(await actionsOf(user)).toContain("account_locked");
    const elsewhere = await passwordStep(user, undefined, new InjectBrowser(signon.app, { remoteAddress: "198.51.100.9" }));
    expect(elsewhere.response.statusCode).toBe(401);
    expect(elsewhere.response.body).toContain("The e-mail address or password is not right.");
  });

  it("answers a locked account's code page with the usual sign-in answer and ends the half-signed-in session", async () => {
    const { user, secret } = await userWithTwoStep();
    const { browser } = await passwordStep(user);
    await lockUser(signon.ctx, user.uid);
    const locked = await enterCode(browser, { code: codeFor(secret) });
    expect(locked.statusCode).toBe(401);
    expect(locked.body).toContain("The e-mail address or password is not right.");
    expect(browser.cookie("signon_session")).toBeUndefined();
    expect(await actionsOf(user)).toContain("sign_in_refused");
  });

  it("does not let a correct password restart the count of wrong codes", async () => {
    const { user, secret } = await userWithTwoStep();
    const { browser } = await passwordStep(user);
    const wrong = String((Number(codeFor(secret)) + 500_000) % 1_000_000).padStart(6, "0");
    for (let attempt = 1; attempt <= 5; attempt++) await enterCode(browser, { code: wrong });
    const wrongPassword = await new InjectBrowser(signon.app).signIn("/sign-in", user.email, "not the password at all");
    expect(wrongPassword.statusCode).toBe(401);
    const next = await passwordStep(user);
    expect(next.response.statusCode).toBe(303);
    expect(await codeFailures(user)).toBe(5);
  });

  it.each([
    ["a code with letters", { code: "abcdef" }],
    ["an oversized code", { code: "1".repeat(33) }],
    ["a remember value other than yes", { code: "123456", remember: "on" }],
  ])("answers %s with a 400 page and does not count it", async (_name, fields) => {
    const { user } = await userWithTwoStep();
    const { browser } = await passwordStep(user);
    const response = await enterCode(browser, fields);
    expect(response.statusCode).toBe(400);
    expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(await codeFailures(user)).toBe(0);
  });

  it("refuses a code post without a valid CSRF token (403) and stays half signed in", async () => {
    const { user, secret } = await userWithTwoStep();
    const { browser } = await passwordStep(user);
    const signedInBefore = user.lastSignedInAt;
    signon.clock.advance(1);
    const response = await browser.postForm("/sign-in/two-step", { _csrf: "forged", code: codeFor(secret), return_to: "/" });
    expect(response.statusCode).toBe(403);
    expect((await browser.get("/account/two-step")).statusCode).toBe(303);
    expect((await reload(user)).lastSignedInAt).toEqual(signedInBefore);
  });
});

describe("remember this browser", () => {
  async function signInRemembering(user: User, secret: string) {
    const { browser } = await passwordStep(user);
    const response = await enterCode(browser, { code: codeFor(secret), remember: "yes" });
    expect(response.statusCode).toBe(303);
    return { browser, response };
  }

  it("sets an HttpOnly, SameSite=Lax cookie for 30 days and stores only its digest", async () => {
    const { user, secret } = await userWithTwoStep();
    const { browser, response } = await signInRemembering(user, secret);
    const cookie = response.cookies.find((entry) => entry.name === "signon_remembered");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/", maxAge: 30 * day });
    const token = browser.cookie("signon_remembered") as string;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const rows = await signon.ctx.db.select().from(rememberedBrowsers).where(eq(rememberedBrowsers.userUid, user.uid));
    expect(rows).toEqual([{ tokenHash: sha256Hex(token), userUid: user.uid, expiresAt: new Date(signon.clock.now().getTime() + 30 * day * 1000), createdAt: signon.clock.now() }]);
  });

  it("skips the code in that browser for 30 days, and asks again after", async () => {
    const { user, secret } = await userWithTwoStep();
    const { browser } = await signInRemembering(user, secret);
    const signOut = await browser.submit("/account/two-step", "/sign-out");
    expect(signOut.statusCode).toBe(303);

    signon.clock.advance(29 * day);
    const within = await passwordStep(user, undefined, browser);
    expect(within.response.headers.location).toBe("/account/two-step");
    expect((await browser.get("/account/two-step")).statusCode).toBe(200);
    await browser.submit("/account/two-step", "/sign-out");

    const elsewhere = await passwordStep(user);
    expect(elsewhere.response.headers.location).toBe("/sign-in/two-step?return_to=%2Faccount%2Ftwo-step");

    signon.clock.advance(day + 1);
    const after = await passwordStep(user, undefined, browser);
    expect(after.response.headers.location).toBe("/sign-in/two-step?return_to=%2Faccount%2Ftwo-step");
  });

  it("is for the user who chose it, not for another account signing in on the same browser", async () => {
    const first = await userWithTwoStep();
    const second = await userWithTwoStep();
    const { browser } = await signInRemembering(first.user, first.secret);
    await browser.submit("/account/two-step", "/sign-out");
    const other = await passwordStep(second.user, undefined, browser);
    expect(other.response.headers.location).toBe("/sign-in/two-step?return_to=%2Faccount%2Ftwo-step");
  });

  it("ignores a forged cookie", async () => {
    const { user } = await userWithTwoStep();
    const browser = new InjectBrowser(signon.app);
    browser.setCookie("signon_remembered", "f".repeat(64));
    const { response } = await passwordStep(user, undefined, browser);
    expect(response.headers.location).toBe("/sign-in/two-step?return_to=%2Faccount%2Ftwo-step");
  });
});

describe("resetTwoStep", () => {
  it("clears the secret, the counts and remembered browsers, ends the user's sessions and records who did it", async () => {
    const admin = await createUser(signon.ctx, { role: "admin" });
    const { user, secret } = await userWithTwoStep();
    const { browser } = await signInRemembering(user, secret);

    await resetTwoStep(signon.ctx, user.uid, admin, origin);

    const cleared = await reload(user);
    expect(cleared).toMatchObject({ otpSecretEncrypted: null, otpEnabledAt: null, lastOtpStep: null });
    expect(await signon.ctx.db.select().from(rememberedBrowsers).where(eq(rememberedBrowsers.userUid, user.uid))).toEqual([]);
    expect(await signon.ctx.db.select().from(sessions).where(eq(sessions.userUid, user.uid))).toEqual([]);
    expect((await browser.get("/account/two-step")).statusCode).toBe(303);
    const [event] = await signon.ctx.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.subjectUid, user.uid), eq(auditEvents.action, "two_step_reset")));
    expect(event).toMatchObject({ actorUid: admin.uid, ip: origin.ip, userAgent: origin.userAgent });

    const next = await passwordStep(user);
    expect(next.response.headers.location).toBe("/account/two-step");
    expect(secretShownOn((await next.browser.get("/account/two-step")).body)).not.toBe(secret);
  });

  it("refuses an unknown or malformed user id", async () => {
    const admin = await createUser(signon.ctx, { role: "admin" });
    await expect(resetTwoStep(signon.ctx, "6f1c1d55-5a4e-4d0c-9a59-3b1c2d3e4f50", admin, origin)).rejects.toThrow("No such user");
    await expect(resetTwoStep(signon.ctx, "not-a-uuid", admin, origin)).rejects.toThrow("No such user");
  });

  async function signInRemembering(user: User, secret: string) {
    const { browser } = await passwordStep(user);
    expect((await enterCode(browser, { code: codeFor(secret), remember: "yes" })).statusCode).toBe(303);
    return { browser };
  }
});

describe("GET /oauth/authorize with 2-step verification", () => {
  it("goes through sign-in and the code page, then back to the authorize URL, which issues the code", async () => {
    const client = await createApp(signon.ctx, { name: "Publisher" });
    const { user, secret } = await userWithTwoStep({ permissions: { Publisher: ["signin"] } });
    const browser = new InjectBrowser(signon.app);
    const url = authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "st4te" });

    const first = await browser.get(url);
    expect(first.headers.location).toBe(`/sign-in?return_to=${encodeURIComponent(url)}`);
    const signedIn = await browser.signIn(url, user.email, defaultPassword);
    expect(signedIn.headers.location).toBe(`/sign-in/two-step?return_to=${encodeURIComponent(url)}`);

    const halfway = await browser.get(url);
    expect(halfway.statusCode).toBe(303);
    expect(halfway.headers.location).toBe(`/sign-in?return_to=${encodeURIComponent(url)}`);

    const verified = await enterCode(browser, { code: codeFor(secret) }, url);
    expect(verified.headers.location).toBe(url);
    const authorized = await browser.get(url);
    expect(authorized.statusCode).toBe(302);
    expect(authorized.headers.location).toMatch(new RegExp(`^${client.redirectUri}\\?code=[0-9a-f]{64}&state=st4te&iss=`));
  });
});
