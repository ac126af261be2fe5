import { and, eq } from "drizzle-orm";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { describe, expect, it } from "vitest";
import { issueApiUserToken, revokeApiUserToken } from "../../src/accounts/api-users.js";
import { createApiUser, suspendUser } from "../../src/accounts/manage-users.js";
import { applications, auditEvents, grants, users } from "../../src/db/schema.js";
import { findUserByUid } from "../../src/repositories/users.js";
import type { InjectBrowser } from "../support/browser.js";
import { createApp, createUser } from "../support/factories.js";
import { getUserJson } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";
import { signedInAs } from "./users-support.js";
import { webState } from "./web-state.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

async function eventCount(action: string): Promise<number> {
  return (await ctx.db.select().from(auditEvents).where(eq(auditEvents.action, action))).length;
}

/** The confirm form of a confirmation page: where it posts, and that it carries the CSRF token and `confirm=yes`. */
function confirmForm(body: string): { action: string; hasCsrf: boolean; hasConfirm: boolean } {
  const form = /<form method="post" action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/.exec(body.slice(body.indexOf("<main")));
  return {
    action: form?.[1] ?? "",
    hasCsrf: /name="_csrf" value="[^"]+"/.test(form?.[2] ?? ""),
    hasConfirm: (form?.[2] ?? "").includes('<input type="hidden" name="confirm" value="yes">'),
  };
}

/**
 * The three steps every irreversible action takes: GET shows a page naming
 * what will happen (with a confirm form back to the action and a way back);
 * a post without `confirm=yes` shows that page again (400) and changes
 * nothing; the post with it acts.
 */
async function expectTwoSteps(
  browser: InjectBrowser,
  action: string,
  expected: { title: string; says: string[]; cancel: string; fields?: Record<string, string> },
): Promise<void> {
  const page = await browser.get(action);
  expect(page.statusCode, `GET ${action}`).toBe(200);
  const text = textOf(page);
  expect(text).toContain(expected.title);
  for (const consequence of expected.says) expect(text).toContain(consequence);
  expect(confirmForm(page.body)).toEqual({ action, hasCsrf: true, hasConfirm: true });
  expect(page.body).toContain(`href="${expected.cancel}"`);

  const before = await webState(ctx);
  const eventsBefore = (await ctx.db.select().from(auditEvents)).length;
  for (const confirm of [undefined, "", "no", "YES"]) {
    const unconfirmed = await browser.submit(action, action, { ...expected.fields, ...(confirm === undefined ? {} : { confirm }) });
    expect(unconfirmed.statusCode, `POST ${action} with confirm=${String(confirm)}`).toBe(400);
    expect(textOf(unconfirmed)).toContain("Nothing has changed yet");
    expect(textOf(unconfirmed)).toContain(expected.title);
  }
  expect(await webState(ctx)).toEqual(before);
  expect((await ctx.db.select().from(auditEvents)).length).toBe(eventsBefore);
}

describe("GET and POST /applications/:id/retire", () => {
  it("names the application, the people and the API tokens it stops; only the confirmed post retires it", async () => {
    const client = await createApp(ctx, { name: "Old Publisher" });
    await createUser(ctx, { permissions: { "Old Publisher": ["signin"] } });
    await createUser(ctx, { permissions: { "Old Publisher": ["signin"] } });
    const robot = await createApiUser(ctx, { name: "Robot", email: "retire-robot@example.org" });
    const { browser, uid } = await signedInAs(app, ctx, "superadmin");
    const { accessToken } = await issueApiUserToken(ctx, { user: robot, applicationId: client.application.id, permissions: [], expiresInDays: 30 }, uid);
    // Not counted: a suspended person, and a token already revoked.
    const away = await createUser(ctx, { permissions: { "Old Publisher": ["signin"] } });
    await suspendUser(ctx, away.email, "On leave");
    const retiredRobot = await createApiUser(ctx, { name: "Retired robot", email: "retired-robot@example.org" });
    await issueApiUserToken(ctx, { user: retiredRobot, applicationId: client.application.id, permissions: [], expiresInDays: 30 }, uid);
    const [revokedGrant] = await ctx.db.select().from(grants).where(eq(grants.userUid, retiredRobot.uid));
    await revokeApiUserToken(ctx, retiredRobot, revokedGrant?.id ?? "", { uid, origin: { ip: null, userAgent: null } });
    const action = `/applications/${client.application.id}/retire`;

    await expectTwoSteps(browser, action, {
      title: "Retire Old Publisher",
      says: ["Old Publisher can no longer sign anyone in: 2 people may sign in to it today.", "1 API token included", "You can bring Old Publisher back later from its page."],
      cancel: `/applications/${client.application.id}`,
    });
    expect((await getUserJson(app, accessToken)).statusCode).toBe(200);

    const retired = await browser.submit(action, action, { confirm: "yes" });
    expect(retired.statusCode).toBe(303);
    expect(textOf(await browser.follow(retired))).toContain("Old Publisher is retired");
    expect((await ctx.db.select().from(applications).where(eq(applications.id, client.application.id)))[0]?.retired).toBe(true);
    expect(await eventCount("application_retired")).toBe(1);
    expect((await getUserJson(app, accessToken)).statusCode).toBe(401);

    const again = await browser.get(action);
    expect(again.statusCode).toBe(303);
    expect(textOf(await browser.follow(again))).toContain("Old Publisher is already retired.");

    // Brought back, its unexpired tokens work again.
    expect((await browser.submit(`/applications/${client.application.id}`, `/applications/${client.application.id}/unretire`)).statusCode).toBe(303);
    expect((await getUserJson(app, accessToken)).statusCode).toBe(200);
  });
});

describe("GET and POST /applications/:id/rotate-secret", () => {
  it("says the current secret stops working and the new one is shown once; only the confirmed post replaces it", async () => {
    const client = await createApp(ctx, { name: "Rotating" });
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const action = `/applications/${client.application.id}/rotate-secret`;

    await expectTwoSteps(browser, action, {
      title: "Replace the client secret of Rotating",
      says: ["The secret Rotating uses now stops working at once.", "The new secret is shown once, on the next page.", "Tokens already issued for Rotating keep working."],
      cancel: `/applications/${client.application.id}`,
    });

    const rotated = await browser.submit(action, action, { confirm: "yes" });
    expect(rotated.statusCode).toBe(303);
    expect((await browser.follow(rotated)).body).toMatch(/<p class="secret"[^>]*>[0-9a-f]{64}<\/p>/);
    const [row] = await ctx.db.select().from(applications).where(eq(applications.id, client.application.id));
    expect(row?.clientSecretHash).not.toBe(client.application.clientSecretHash);
    expect(await eventCount("application_secret_rotated")).toBe(1);
  });
});

describe("GET and POST /api-users/:uid/tokens/:grantId/revoke", () => {
  it("names the API user, the application and when the token was issued; only the confirmed post revokes it", async () => {
    const client = await createApp(ctx, { name: "Content API", permissions: ["read"] });
    const robot = await createApiUser(ctx, { name: "Importer", email: "importer@example.org" });
    const { browser, uid } = await signedInAs(app, ctx, "superadmin");
    const { accessToken } = await issueApiUserToken(ctx, { user: robot, applicationId: client.application.id, permissions: ["read"], expiresInDays: 30 }, uid);
    const [grant] = await ctx.db.select().from(grants).where(eq(grants.userUid, robot.uid));
    const listed = await browser.get(`/api-users/${robot.uid}`);
    const action = `/api-users/${robot.uid}/tokens/${grant?.id}/revoke`;
    expect(listed.body).toContain(`<a href="${action}">`);

    await expectTwoSteps(browser, action, {
      title: "Revoke the token of Importer for Content API",
      says: [
        "issued ",
        "stops working at once: every request that sends it is refused (401).",
        "Importer keeps its permissions on Content API (read, signin)",
      ],
      cancel: `/api-users/${robot.uid}`,
    });
    expect((await getUserJson(app, accessToken)).statusCode).toBe(200);

    const revoked = await browser.submit(action, action, { confirm: "yes" });
    expect(revoked.statusCode).toBe(303);
    expect(textOf(await browser.follow(revoked))).toContain("The token for Content API is revoked: it no longer works.");
    expect((await getUserJson(app, accessToken)).statusCode).toBe(401);
    expect(await eventCount("api_token_revoked")).toBe(1);

    const again = await browser.get(action);
    expect(again.statusCode).toBe(303);
    expect(textOf(await browser.follow(again))).toContain("That token is already revoked");
  });
});

describe("GET and POST /users/:uid/suspend", () => {
  it("asks for the reason on a page naming the applications that sign them out; only the confirmed post with a reason suspends", async () => {
    for (const name of ["Whitehall", "Mainstream", "Collections"]) await createApp(ctx, { name });
    const target = await createUser(ctx, {
      name: "Sue Pended",
      email: "sue@example.org",
      permissions: { Whitehall: ["signin"], Mainstream: ["signin"], Collections: ["signin"] },
    });
    // Collections never signed her in: it is not told (row 23).
    for (const application of ["Whitehall", "Mainstream"]) await issueOperatorToken(ctx, { email: target.email, application });
    const { browser } = await signedInAs(app, ctx, "admin");
    const userPage = await browser.get(`/users/${target.uid}`);
    expect(userPage.body).toContain(`<form method="get" action="/users/${target.uid}/suspend">`);
    expect(userPage.body).not.toContain(`<form method="post" action="/users/${target.uid}/suspend"`);
    const action = `/users/${target.uid}/suspend`;

    await expectTwoSteps(browser, action, {
      title: "Suspend Sue Pended",
      says: [
        "Sue Pended (sue@example.org) can no longer sign in",
        "The applications that issued them a token are told to sign them out: Mainstream, Whitehall.",
        "You can unsuspend them later",
      ],
      cancel: `/users/${target.uid}`,
      fields: { reason: "Left the team" },
    });
    const unconfirmed = await browser.submit(action, action, { reason: "Left the team" });
    expect(unconfirmed.body).toMatch(/<textarea id="reason" name="reason"[^>]*>Left the team<\/textarea>/);

    const noReason = await browser.submit(action, action, { confirm: "yes", reason: "  " });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.body).toContain('<a href="#reason">Enter the reason for the suspension</a>');
    expect(noReason.body).toContain('<form method="post" action="' + action + '"');
    expect((await browser.submit(action, action, { confirm: "yes" })).statusCode).toBe(400);
    expect((await findUserByUid(ctx.db, target.uid))?.suspendedAt).toBeNull();

    const suspended = await browser.submit(action, action, { confirm: "yes", reason: "Left the team" });
    expect(suspended.statusCode).toBe(303);
    expect(textOf(await browser.follow(suspended))).toContain("Sue Pended is suspended.");
    expect(await findUserByUid(ctx.db, target.uid)).toMatchObject({ suspensionReason: "Left the team" });
    expect(await eventCount("user_suspended")).toBe(1);

    const again = await browser.get(action);
    expect(again.statusCode).toBe(303);
    expect(textOf(await browser.follow(again))).toContain("sue@example.org is already suspended.");
  });

  it("refuses suspending yourself, before and after the confirmation", async () => {
    const { browser, uid } = await signedInAs(app, ctx, "admin");
    const page = await browser.get(`/users/${uid}/suspend`);
    expect(page.statusCode).toBe(303);
    expect(textOf(await browser.follow(page))).toContain("You cannot suspend your own account.");
    const posted = await browser.submit(`/users/${uid}`, `/users/${uid}/suspend`, { confirm: "yes", reason: "Testing" });
    expect(posted.statusCode).toBe(400);
    expect(textOf(posted)).toContain("You cannot suspend your own account");
    expect((await findUserByUid(ctx.db, uid))?.suspendedAt).toBeNull();
  });
});

describe("GET and POST /users/:uid/reset-two-step", () => {
  it("says they are signed out everywhere and set it up again; only the confirmed post resets it", async () => {
    await createApp(ctx, { name: "Publisher" });
    const target = await createUser(ctx, { name: "Phone Lost", email: "phone@example.org", permissions: { Publisher: ["signin"] } });
    await issueOperatorToken(ctx, { email: target.email, application: "Publisher" });
    const { browser } = await signedInAs(app, ctx, "admin");
    const action = `/users/${target.uid}/reset-two-step`;
    const off = await browser.get(action);
    expect(off.statusCode).toBe(303);
    expect(textOf(await browser.follow(off))).toContain("Phone Lost has not set up 2-step verification.");

    await ctx.db.update(users).set({ otpSecretEncrypted: "sealed", otpEnabledAt: ctx.now() }).where(eq(users.uid, target.uid));
    expect((await browser.get(`/users/${target.uid}`)).body).toContain(`<form method="get" action="${action}">`);
    await expectTwoSteps(browser, action, {
      title: "Reset 2-step verification for Phone Lost",
      says: [
        "2-step verification of Phone Lost (phone@example.org) is turned off",
        "They are signed out everywhere: their Sign-on sessions end and their tokens are revoked. The applications that issued them a token are told to sign them out: Publisher.",
        "At their next sign-in they set up 2-step verification again, with a new key.",
        "This cannot be undone",
      ],
      cancel: `/users/${target.uid}`,
    });

    const reset = await browser.submit(action, action, { confirm: "yes" });
    expect(reset.statusCode).toBe(303);
    expect(await findUserByUid(ctx.db, target.uid)).toMatchObject({ otpEnabledAt: null, otpSecretEncrypted: null });
    expect(await ctx.db.select().from(auditEvents).where(and(eq(auditEvents.action, "two_step_reset"), eq(auditEvents.subjectUid, target.uid)))).toHaveLength(1);
  });
});

describe("the confirm forms", () => {
  it("keep the CSRF check: a confirmed post with a forged token is refused and changes nothing", async () => {
    const client = await createApp(ctx, { name: "Guarded by CSRF" });
    const target = await createUser(ctx);
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const before = await webState(ctx);
    for (const [action, fields] of [
      [`/applications/${client.application.id}/retire`, {}],
      [`/applications/${client.application.id}/rotate-secret`, {}],
      [`/users/${target.uid}/suspend`, { reason: "Forged" }],
    ] as const) {
      await browser.get(action);
      const response = await browser.postForm(action, { _csrf: "forged", confirm: "yes", ...fields });
      expect(response.statusCode, action).toBe(403);
    }
    expect(await webState(ctx)).toEqual(before);
  });

  it("answer 404 for an unknown application, API user or token, or a malformed id", async () => {
    const robot = await createApiUser(ctx, { name: "Lonely", email: "lonely@example.org" });
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const unknown = "4a1c9f7e-1111-4a4a-8b8b-000000000000";
    for (const url of [
      `/applications/${unknown}/retire`,
      `/applications/not-an-id/rotate-secret`,
      `/api-users/${unknown}/tokens/${unknown}/revoke`,
      `/api-users/${robot.uid}/tokens/${unknown}/revoke`,
      `/api-users/${robot.uid}/tokens/zzz/revoke`,
      `/users/${unknown}/suspend`,
      `/users/not-a-uid/reset-two-step`,
    ]) {
      expect((await browser.get(url)).statusCode, url).toBe(404);
    }
  });
});
