import { randomBytes, randomUUID } from "node:crypto";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { auditEvents, passkeys, pushDeliveries, sessions, users } from "../../src/db/schema.js";
import { insertPasskey } from "../../src/repositories/passkeys.js";
import { findUserByUid } from "../../src/repositories/users.js";
import { createApp, createUser, defaultPassword, lockUser } from "../support/factories.js";
import { signedInBrowser } from "../support/browser.js";
import { useTestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";
import { createTestOrganisation, signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

const editFields = (user: { name: string; email: string; role: string; organisationId: string | null }) => ({
  name: user.name,
  email: user.email,
  role: user.role,
  organisation: user.organisationId ?? "",
});

async function eventsOf(uid: string, action: string) {
  return ctx.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUid, uid), eq(auditEvents.action, action)));
}

/** Stores a passkey for `uid` as a registration would (the key itself is never checked by these pages). */
async function addPasskey(uid: string, fields: { name: string; createdAt: Date; lastUsedAt: Date | null; deviceType?: string }): Promise<void> {
  await insertPasskey(
    ctx.db,
    {
      id: randomUUID(),
      userUid: uid,
      credentialId: randomBytes(16).toString("base64url"),
      publicKey: randomBytes(32).toString("base64url"),
      signCount: 0,
      transports: ["internal"],
      name: fields.name,
      deviceType: fields.deviceType ?? "singleDevice",
      backedUp: false,
      createdAt: fields.createdAt,
      lastUsedAt: fields.lastUsedAt,
    },
    ctx.now(),
  );
}

describe("GET /users/:uid", () => {
  it("shows the summary: status, lock, 2-step verification and last sign-in", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { name: "Ada Lovelace", email: "ada@example.org" });
    await lockUser(ctx, target.uid);
    const response = await browser.get(`/users/${target.uid}`);
    expect(response.statusCode).toBe(200);
    const text = textOf(response);
    expect(text).toContain("E-mail ada@example.org");
    expect(text).toContain("Status locked");
    expect(text).toMatch(/Locked Yes, since \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(text).toContain("2-step verification Off");
    expect(text).toContain("Last sign-in Never");
    expect(response.body).toContain(`action="/users/${target.uid}/unlock"`);
    expect(response.body).toContain(`<form method="get" action="/users/${target.uid}/suspend">`);
    expect(response.body).not.toContain(`action="/users/${target.uid}/reset-two-step"`);
  });

  it("answers 404 for an unknown or malformed uid", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    for (const uid of ["00000000-0000-4000-8000-000000000000", "not-a-uid", "%27%3B--", "x".repeat(150)]) {
      const response = await browser.get(`/users/${uid}`);
      expect(response.statusCode, uid).toBe(404);
      expect(textOf(response)).toContain("Page not found");
    }
    expect((await browser.get("/users/not-a-uid/permissions")).statusCode).toBe(404);
    expect((await browser.get("/users/not-a-uid/events")).statusCode).toBe(404);
  });

  it("refuses normal users, and organisation admins for other organisations, admins and superadmins", async () => {
    const mine = await createTestOrganisation(ctx);
    const other = await createTestOrganisation(ctx);
    const target = await createUser(ctx, { organisationId: mine.id });
    const { browser: normal } = await signedInAs(app, ctx, "normal", mine.id);
    expect((await normal.get(`/users/${target.uid}`)).statusCode).toBe(403);

    const { browser: orgAdmin } = await signedInAs(app, ctx, "organisation_admin", mine.id);
    expect((await orgAdmin.get(`/users/${target.uid}`)).statusCode).toBe(200);
    for (const forbidden of [
      await createUser(ctx, { organisationId: other.id }),
      await createUser(ctx, { organisationId: mine.id, role: "admin" }),
      await createUser(ctx, { organisationId: mine.id, role: "superadmin" }),
      await createUser(ctx),
    ]) {
      for (const path of ["", "/permissions", "/events"]) expect((await orgAdmin.get(`/users/${forbidden.uid}${path}`)).statusCode).toBe(403);
    }

    const { browser: admin } = await signedInAs(app, ctx, "admin");
    const superadmin = await createUser(ctx, { role: "superadmin" });
    expect((await admin.get(`/users/${superadmin.uid}`)).statusCode).toBe(403);
  });

  it("leaves API users to their own pages", async () => {
    const apiUser = await createApiUser(ctx, { name: "Robot", email: "robot@example.org" });
    const { browser } = await signedInAs(app, ctx, "superadmin");
    for (const path of ["", "/permissions", "/events"]) expect((await browser.get(`/users/${apiUser.uid}${path}`)).statusCode).toBe(404);
    const response = await browser.submit("/users/new", `/users/${apiUser.uid}`, { name: "Changed", email: apiUser.email, role: "admin", organisation: "" });
    expect(response.statusCode).toBe(404);
    expect(await findUserByUid(ctx.db, apiUser.uid)).toMatchObject({ name: "Robot", role: "normal" });
  });
});

describe("POST /users/:uid", () => {
  it("changes the details, queues pushes and records the role change", async () => {
    const organisation = await createTestOrganisation(ctx);
    const { application } = await createApp(ctx, { pushBaseUrl: "https://app.example/push" });
    const { browser, uid: actorUid } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { permissions: { [application.name]: ["signin"] } });
    // An application that issued the person a token hears of their details (row 23).
    await issueOperatorToken(ctx, { email: target.email, application: application.name });
    await ctx.db.delete(pushDeliveries);

    const response = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}`, {
      name: "New Name",
      email: "new@example.org",
      role: "organisation_admin",
      organisation: organisation.id,
      // Confirmed out of band, so the address changes at once (otherwise a link is mailed: email-change.test.ts).
      email_confirmed_out_of_band: "yes",
    });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(`/users/${target.uid}`);
    expect(textOf(await browser.get(`/users/${target.uid}`))).toContain("The changes are saved.");

    const updated = await findUserByUid(ctx.db, target.uid);
    expect(updated).toMatchObject({ name: "New Name", email: "new@example.org", role: "organisation_admin", organisationId: organisation.id });
    const [roleChange] = await eventsOf(target.uid, "role_changed");
    expect(roleChange).toMatchObject({ actorUid, details: { from: "normal", to: "organisation_admin" } });
    const [detailsChange] = await eventsOf(target.uid, "user_updated");
    expect(detailsChange?.details).toEqual({ changed: ["email", "name", "organisationId"] });
    const pushes = await ctx.db.select().from(pushDeliveries).where(eq(pushDeliveries.userUid, target.uid));
    // A new e-mail address ends every sign-in of the person (S18): a reauth follows the update where they hold signin.
    expect(pushes.sort((a, b) => a.seq - b.seq).map((push) => [push.applicationId, push.kind])).toEqual([
      [application.id, "update"],
      [application.id, "reauth"],
    ]);
  });

  it("answers 400 with the form and messages next to the fields, changing nothing", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { name: "Kept Name" });
    const taken = await createUser(ctx);

    const response = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}`, {
      name: " ",
      email: "not an address",
      role: "superadmin",
      organisation: "00000000-0000-4000-8000-000000000000",
    });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('role="alert"');
    expect(response.body).toContain('<a href="#name">Enter a name</a>');
    expect(response.body).toContain('<a href="#email">Enter an e-mail address like name@example.org</a>');
    expect(response.body).toContain('<a href="#role">Choose one of the roles listed</a>');
    expect(response.body).toContain('<a href="#organisation">Choose one of the organisations listed</a>');
    expect(response.body).toContain('id="name-error"');
    expect(response.body).toContain('value="not an address"');

    const duplicate = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}`, { ...editFields(target), email: taken.email.toUpperCase() });
    expect(duplicate.statusCode).toBe(400);
    expect(textOf(duplicate)).toContain("Another account already uses this e-mail address");

    expect(await findUserByUid(ctx.db, target.uid)).toMatchObject({ name: "Kept Name", email: target.email, role: "normal" });
    expect(await eventsOf(target.uid, "user_updated")).toEqual([]);
  });

  it("refuses a post without a valid CSRF token", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { name: "Kept Name" });
    await browser.get(`/users/${target.uid}`);
    const response = await browser.postForm(`/users/${target.uid}`, { _csrf: "forged", ...editFields(target), name: "Changed" });
    expect(response.statusCode).toBe(403);
    expect((await findUserByUid(ctx.db, target.uid))?.name).toBe("Kept Name");
  });

  it("keeps admins from giving the superadmin role or touching superadmins", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx);
    const refused = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}`, { ...editFields(target), role: "superadmin" });
    expect(refused.statusCode).toBe(400);
    expect((await findUserByUid(ctx.db, target.uid))?.role).toBe("normal");

    const superadmin = await createUser(ctx, { role: "superadmin", name: "Top" });
    const anyPage = `/users/${target.uid}`;
    const response = await browser.submit(anyPage, `/users/${superadmin.uid}`, { ...editFields(superadmin), name: "Changed" });
    expect(response.statusCode).toBe(403);
    for (const action of ["suspend", "unsuspend", "unlock", "reset-two-step", "permissions"]) {
      expect((await browser.submit(anyPage, `/users/${superadmin.uid}/${action}`, action === "suspend" ? { reason: "x", confirm: "yes" } : action === "reset-two-step" ? { confirm: "yes" } : {})).statusCode).toBe(403);
    }
    expect(await findUserByUid(ctx.db, superadmin.uid)).toMatchObject({ name: "Top", suspendedAt: null });
  });

  it("lets a superadmin give the superadmin role", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const target = await createUser(ctx);
    const response = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}`, { ...editFields(target), role: "superadmin" });
    expect(response.statusCode).toBe(303);
    expect((await findUserByUid(ctx.db, target.uid))?.role).toBe("superadmin");
  });

  it("keeps organisation admins to their organisation and their roles", async () => {
    const mine = await createTestOrganisation(ctx);
    const other = await createTestOrganisation(ctx);
    const { browser } = await signedInAs(app, ctx, "organisation_admin", mine.id);
    const target = await createUser(ctx, { organisationId: mine.id });
    const page = await browser.get(`/users/${target.uid}`);
    expect(page.body).not.toContain('name="organisation"');
    expect(page.body).not.toContain('value="admin"');

    const moved = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}`, { name: target.name, email: target.email, role: "normal", organisation: other.id });
    expect(moved.statusCode).toBe(400);
    const promoted = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}`, { name: target.name, email: target.email, role: "admin" });
    expect(promoted.statusCode).toBe(400);
    expect(await findUserByUid(ctx.db, target.uid)).toMatchObject({ organisationId: mine.id, role: "normal" });

    const stranger = await createUser(ctx, { organisationId: other.id, name: "Stranger" });
    const foreign = await browser.submit(`/users/${target.uid}`, `/users/${stranger.uid}`, { name: "Changed", email: stranger.email, role: "normal" });
    expect(foreign.statusCode).toBe(403);
    expect((await findUserByUid(ctx.db, stranger.uid))?.name).toBe("Stranger");

    const renamed = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}`, { name: "Renamed", email: target.email, role: "organisation_admin" });
    expect(renamed.statusCode).toBe(303);
    expect(await findUserByUid(ctx.db, target.uid)).toMatchObject({ name: "Renamed", role: "organisation_admin", organisationId: mine.id });
  });

  it("refuses normal users on every post", async () => {
    const target = await createUser(ctx, { name: "Kept Name" });
    const { browser, uid } = await signedInAs(app, ctx, "normal");
    const formPage = "/"; // a page with a CSRF token (the sign-out form) that a normal user can open
    const ownPage = `/users/${uid}`;
    expect((await browser.get(ownPage)).statusCode).toBe(403);
    const posts: [string, Record<string, string>][] = [
      [`/users/${target.uid}`, { ...editFields(target), name: "Changed" }],
      [`/users/${target.uid}/suspend`, { reason: "No", confirm: "yes" }],
      [`/users/${target.uid}/unsuspend`, {}],
      [`/users/${target.uid}/unlock`, {}],
      [`/users/${target.uid}/reset-two-step`, { confirm: "yes" }],
      [`/users/${target.uid}/permissions`, {}],
      ["/users/new", { name: "X", email: "x@example.org", role: "normal" }],
    ];
    for (const [action, fields] of posts) {
      const response = await browser.submit(formPage, action, fields);
      expect(response.statusCode, action).toBe(403);
    }
    expect(await findUserByUid(ctx.db, target.uid)).toMatchObject({ name: "Kept Name", suspendedAt: null });
  });
});

describe("POST /users/:uid/suspend and /unsuspend", () => {
  it("suspends with a reason, ending the user's sessions, and unsuspends", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { name: "Bob" });
    await signedInBrowser(app, target.email, defaultPassword);
    expect(await ctx.db.select().from(sessions).where(eq(sessions.userUid, target.uid))).toHaveLength(1);

    const response = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}/suspend`, { reason: "Left the team", confirm: "yes" });
    expect(response.statusCode).toBe(303);
    const page = textOf(await browser.get(`/users/${target.uid}`));
    expect(page).toContain("Bob is suspended.");
    expect(page).toContain("Left the team");
    expect((await findUserByUid(ctx.db, target.uid))?.suspensionReason).toBe("Left the team");
    expect(await ctx.db.select().from(sessions).where(eq(sessions.userUid, target.uid))).toEqual([]);

    const lifted = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}/unsuspend`);
    expect(lifted.statusCode).toBe(303);
    expect((await findUserByUid(ctx.db, target.uid))?.suspendedAt).toBeNull();
    const again = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}/unsuspend`);
    expect(again.statusCode).toBe(400);
    expect(textOf(again)).toContain("is not suspended");
  });

  it("answers 400 without a reason, and refuses suspending yourself", async () => {
    const { browser, uid } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx);
    const response = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}/suspend`, { reason: "   ", confirm: "yes" });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('<a href="#reason">Enter the reason for the suspension</a>');
    const missing = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}/suspend`, { confirm: "yes" });
    expect(missing.statusCode).toBe(400);
    const self = await browser.submit(`/users/${uid}`, `/users/${uid}/suspend`, { reason: "Testing", confirm: "yes" });
    expect(self.statusCode).toBe(400);
    expect(textOf(self)).toContain("You cannot suspend your own account");
    expect((await findUserByUid(ctx.db, target.uid))?.suspendedAt).toBeNull();
    expect((await findUserByUid(ctx.db, uid))?.suspendedAt).toBeNull();
  });
});

describe("POST /users/:uid/unlock", () => {
  it("lifts the lock, and answers 400 when there is none", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx);
    await lockUser(ctx, target.uid);
    const response = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}/unlock`);
    expect(response.statusCode).toBe(303);
    expect((await findUserByUid(ctx.db, target.uid))?.lockedAt).toBeNull();
    expect(await eventsOf(target.uid, "account_unlocked")).toHaveLength(1);
    const again = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}/unlock`);
    expect(again.statusCode).toBe(400);
  });
});

describe("a person's passkeys on GET /users/:uid", () => {
  it("lists each passkey with its name, when it was added and last used, and counts them", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { name: "Pat Keys" });
    await addPasskey(target.uid, { name: "Work laptop", createdAt: new Date("2026-01-02T10:30:00Z"), lastUsedAt: new Date("2026-01-10T08:15:00Z") });
    await addPasskey(target.uid, { name: "Blue <key>", createdAt: new Date("2026-01-05T12:00:00Z"), lastUsedAt: null, deviceType: "multiDevice" });
    const page = await browser.get(`/users/${target.uid}`);
    expect(page.statusCode).toBe(200);
    const text = textOf(page);
    expect(text).toContain("2-step verification On");
    expect(text).toContain("Authenticator app None");
    expect(text).toMatch(/Passkeys 2 \( ?listed below ?\)/);
    expect(text).toContain("2 passkeys sign in to this account");
    expect(text).toContain("Work laptop 2026-01-02 10:30 UTC 2026-01-10 08:15 UTC");
    expect(text).toContain("Blue <key> Synced 2026-01-05 12:00 UTC Never");
    // Names are the person's own text: escaped.
    expect(page.body).toContain("Blue &lt;key&gt;");
    expect(page.body).toContain(`action="/users/${target.uid}/reset-two-step"`);
  });

  it("says when the person has none", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx);
    const text = textOf(await browser.get(`/users/${target.uid}`));
    expect(text).toContain("Passkeys None");
    expect(text).toContain(`${target.name} has no passkeys.`);
  });

  it("shows an organisation admin the passkeys of a person of their organisation", async () => {
    const mine = await createTestOrganisation(ctx);
    const { browser } = await signedInAs(app, ctx, "organisation_admin", mine.id);
    const target = await createUser(ctx, { organisationId: mine.id });
    await addPasskey(target.uid, { name: "Phone", createdAt: ctx.now(), lastUsedAt: null });
    expect(textOf(await browser.get(`/users/${target.uid}`))).toMatch(/Passkeys 1 \( ?listed below ?\)/);
  });
});

describe("POST /users/:uid/reset-two-step", () => {
  it("names the passkeys it removes, removes them and audits how many", async () => {
    const { browser, uid: adminUid } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { name: "Key Lost" });
    await addPasskey(target.uid, { name: "Laptop", createdAt: new Date("2026-01-02T00:00:00Z"), lastUsedAt: null });
    await addPasskey(target.uid, { name: "Phone", createdAt: new Date("2026-01-03T00:00:00Z"), lastUsedAt: null });
    const confirmation = await browser.get(`/users/${target.uid}/reset-two-step`);
    expect(confirmation.statusCode).toBe(200);
    expect(textOf(confirmation)).toContain("their 2 passkeys are removed (“Laptop”, “Phone”)");
    const response = await browser.submit(`/users/${target.uid}/reset-two-step`, `/users/${target.uid}/reset-two-step`, { confirm: "yes" });
    expect(response.statusCode).toBe(303);
    expect(await findUserByUid(ctx.db, target.uid)).toMatchObject({ passkeyCount: 0 });
    expect(await ctx.db.select().from(passkeys).where(eq(passkeys.userUid, target.uid))).toEqual([]);
    const [event] = await eventsOf(target.uid, "two_step_reset");
    expect(event).toMatchObject({ actorUid: adminUid, details: { passkeys_removed: 2 } });
    expect(textOf(await browser.get(`/users/${target.uid}`))).toContain("Passkeys None");
    expect(textOf(await browser.get(`/users/${target.uid}/events`))).toContain("2 passkeys removed");
  });


  it("turns 2-step verification off and ends the user's sessions", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { name: "Phone Lost" });
    const notOn = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}/reset-two-step`);
    expect(notOn.statusCode).toBe(400);

    await ctx.db.update(users).set({ otpSecretEncrypted: "sealed", otpEnabledAt: ctx.now() }).where(eq(users.uid, target.uid));
    await signedInBrowser(app, target.email, defaultPassword).catch(() => undefined);
    const page = await browser.get(`/users/${target.uid}`);
    expect(textOf(page)).toContain("2-step verification On");
    const response = await browser.submit(`/users/${target.uid}`, `/users/${target.uid}/reset-two-step`, { confirm: "yes" });
    expect(response.statusCode).toBe(303);
    expect(await findUserByUid(ctx.db, target.uid)).toMatchObject({ otpEnabledAt: null, otpSecretEncrypted: null });
    expect(await eventsOf(target.uid, "two_step_reset")).toHaveLength(1);
    expect(await ctx.db.select().from(sessions).where(eq(sessions.userUid, target.uid))).toEqual([]);
  });
});
