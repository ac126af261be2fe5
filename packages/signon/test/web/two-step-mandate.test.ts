import { asc, eq } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { Role } from "../../src/accounts/manage-users.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { auditEvents, organisations, users } from "../../src/db/schema.js";
import { findUserByUid, type User } from "../../src/repositories/users.js";
import { decodeEntities, InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { authorizeUrl } from "../support/flow.js";
import { buildTestSignon, openTestDatabase, testConfig } from "../support/signon.js";

// The installation's default: superadmins and admins must use 2-step verification.
const database = await openTestDatabase();
const signon = await buildTestSignon(database, testConfig({ SIGNON_TWO_STEP_REQUIRED_ROLES: "superadmin,admin" }));
afterAll(async () => {
  await signon.app.close();
  await database.close();
});
beforeEach(() => database.reset());

const day = 24 * 3600;

/** The day `days` after the test clock's, as the exemption form takes it. */
function dayAfter(days: number): string {
  return new Date(signon.clock.now().getTime() + days * day * 1000).toISOString().slice(0, 10);
}

function secretShownOn(html: string): string {
  const shown = /<p class="secret" id="secret">([A-Z2-7 ]+)<\/p>/.exec(html)?.[1];
  if (shown === undefined) throw new Error(`no secret on the page:\n${html}`);
  return shown.replace(/ /g, "");
}

function codeFor(secret: string): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: signon.clock.now().getTime() });
}

async function reload(user: User): Promise<User> {
  const fresh = await findUserByUid(signon.ctx.db, user.uid);
  if (!fresh) throw new Error("user gone");
  return fresh;
}

/** Audit events in order: action, actor, subject and details. */
async function events() {
  return signon.ctx.db
    .select({ action: auditEvents.action, actorUid: auditEvents.actorUid, subjectUid: auditEvents.subjectUid, details: auditEvents.details })
    .from(auditEvents)
    .orderBy(asc(auditEvents.id));
}

async function mandateEvents() {
  return (await events()).filter((event) => /two_step_(required|requirement_removed|exempted|exemption_removed)$/.test(event.action));
}

/** Signs in through the form at `url`; returns the browser and the answer to the password. */
async function signIn(user: User, url = "/sign-in") {
  const browser = new InjectBrowser(signon.app);
  const response = await browser.signIn(url, user.email, defaultPassword);
  expect(response.statusCode).toBe(303);
  return { browser, response };
}

/** Whether `user` is sent to set up 2-step verification right after their password. */
async function sentToSetUpAtSignIn(user: User): Promise<boolean> {
  const { response } = await signIn(user);
  return (response.headers.location as string).startsWith("/account/two-step");
}

/** A browser signed in as a new person with `role` who set up 2-step verification on the way in, as they are asked to. */
async function browserWithTwoStep(role: Role): Promise<InjectBrowser> {
  const user = await createUser(signon.ctx, { role });
  const { browser } = await signIn(user);
  const secret = secretShownOn((await browser.get("/account/two-step")).body);
  const done = await browser.submit("/account/two-step", "/account/two-step", { code: codeFor(secret) });
  expect(done.statusCode).toBe(303);
  return browser;
}

const superadminBrowser = () => browserWithTwoStep("superadmin");

describe("signing in without the 2-step verification a role requires", () => {
  it("sends an admin to set it up right after the password, and every signed-in page sends them back there", async () => {
    const admin = await createUser(signon.ctx, { role: "admin" });
    const { browser, response } = await signIn(admin, "/sign-in?return_to=%2Fusers");
    expect(response.headers.location).toBe("/account/two-step?return_to=%2Fusers");

    for (const path of ["/", "/users", "/account", "/account/password", `/users/${admin.uid}`, "/organisations"]) {
      const page = await browser.get(path);
      expect(page.statusCode, path).toBe(303);
      expect(page.headers.location, path).toBe(`/account/two-step?return_to=${encodeURIComponent(path)}`);
    }
    // A form posted elsewhere is refused the same way, and changes nothing.
    const setUpPage = await browser.get("/account/two-step?return_to=%2Fusers");
    const csrf = decodeEntities(/name="_csrf" value="([^"]*)"/.exec(setUpPage.body)?.[1] ?? "");
    const posted = await browser.postForm(`/users/${admin.uid}/two-step-requirement`, { _csrf: csrf, required: "yes" });
    expect(posted.statusCode).toBe(303);
    expect(posted.headers.location).toBe("/account/two-step?return_to=%2F");
    expect((await reload(admin)).twoStepRequired).toBe(false);

    expect(setUpPage.statusCode).toBe(200);
    expect(setUpPage.body).toContain("Your account must use 2-step verification.");
    expect(setUpPage.body).toContain('name="return_to" value="/users"');
    // Nothing to navigate to but signing out.
    expect(setUpPage.body).not.toContain('<nav aria-label="Main">');
    expect(setUpPage.body).toContain('action="/sign-out"');
    const signedOut = await browser.postForm("/sign-out", { _csrf: csrf });
    expect(signedOut.headers.location).toBe("/sign-in");
    expect((await browser.get("/account/two-step")).headers.location).toBe("/sign-in?return_to=%2Faccount%2Ftwo-step");
  });

  it("lets them go on where they were going once it is on, and not before", async () => {
    const admin = await createUser(signon.ctx, { role: "admin" });
    const { browser } = await signIn(admin, "/sign-in?return_to=%2Fusers");
    const secret = secretShownOn((await browser.get("/account/two-step?return_to=%2Fusers")).body);
    const wrong = await browser.submit("/account/two-step?return_to=%2Fusers", "/account/two-step", { code: "000000", return_to: "/users" });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('name="return_to" value="/users"');
    expect((await browser.get("/users")).statusCode).toBe(303);

    const done = await browser.submit("/account/two-step?return_to=%2Fusers", "/account/two-step", { code: codeFor(secret), return_to: "/users" });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe("/users");
    const users = await browser.get("/users");
    expect(users.statusCode).toBe(200);
    expect(users.body).toContain("2-step verification is on.");
    expect(users.body).toContain('<nav aria-label="Main">');
  });

  it("applies to superadmins and admins by default, not to organisation admins or normal users", async () => {
    const organisation = await createOrganisation(signon.ctx, { slug: "org", name: "Org" });
    expect(await sentToSetUpAtSignIn(await createUser(signon.ctx, { role: "superadmin" }))).toBe(true);
    expect(await sentToSetUpAtSignIn(await createUser(signon.ctx, { role: "admin" }))).toBe(true);
    expect(await sentToSetUpAtSignIn(await createUser(signon.ctx, { role: "organisation_admin", organisationId: organisation.id }))).toBe(false);
    expect(await sentToSetUpAtSignIn(await createUser(signon.ctx, { role: "normal" }))).toBe(false);
  });
});

describe("GET /oauth/authorize for a person who must set up 2-step verification", () => {
  it("sends them to its set-up and resumes the authorization afterwards", async () => {
    const client = await createApp(signon.ctx);
    const admin = await createUser(signon.ctx, { role: "admin", permissions: { [client.application.name]: ["signin"] } });
    const url = authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "st4te" });
    const { browser, response } = await signIn(admin, url);
    expect(response.headers.location).toBe(`/account/two-step?return_to=${encodeURIComponent(url)}`);

    // Straight to the authorize endpoint, signed in: no code yet.
    const refused = await browser.get(url);
    expect(refused.statusCode).toBe(303);
    expect(refused.headers.location).toBe(`/account/two-step?return_to=${encodeURIComponent(url)}`);
    expect((await events()).map((event) => event.action)).not.toContain("authorization_code_issued");

    const setUpUrl = refused.headers.location as string;
    const secret = secretShownOn((await browser.get(setUpUrl)).body);
    const done = await browser.submit(setUpUrl, "/account/two-step", { code: codeFor(secret), return_to: url });
    expect(done.headers.location).toBe(url);
    const authorized = await browser.get(url);
    expect(authorized.statusCode).toBe(302);
    const location = new URL(authorized.headers.location as string);
    expect(location.searchParams.get("state")).toBe("st4te");
    expect(location.searchParams.get("code")).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("POST /users/:uid/two-step-requirement", () => {
  it("requires 2-step verification of one person, audited, until an administrator stops requiring it", async () => {
    const admin = await superadminBrowser();
    const person = await createUser(signon.ctx);
    expect(await sentToSetUpAtSignIn(person)).toBe(false);

    const required = await admin.submit(`/users/${person.uid}`, `/users/${person.uid}/two-step-requirement`, { required: "yes" });
    expect(required.statusCode).toBe(303);
    expect(required.headers.location).toBe(`/users/${person.uid}`);
    const page = await admin.follow(required);
    expect(page.body).toContain(`${person.name} must use 2-step verification. They set it up at their next sign-in.`);
    expect(page.body).toContain("<dt>2-step required</dt><dd>Yes, by this person&#39;s own requirement</dd>");
    expect(page.body).toContain(`Stop requiring 2-step verification of ${person.name}`);
    expect(await sentToSetUpAtSignIn(person)).toBe(true);

    await admin.submit(`/users/${person.uid}`, `/users/${person.uid}/two-step-requirement`, { required: "no" });
    expect(await sentToSetUpAtSignIn(person)).toBe(false);
    const [actor] = (await signon.ctx.db.select({ uid: users.uid }).from(users).where(eq(users.role, "superadmin"))).map((row) => row.uid);
    expect(await mandateEvents()).toEqual([
      { action: "two_step_required", actorUid: actor, subjectUid: person.uid, details: {} },
      { action: "two_step_requirement_removed", actorUid: actor, subjectUid: person.uid, details: {} },
    ]);
    const log = await admin.get(`/users/${person.uid}/events`);
    expect(log.body).toContain("2-step verification required");
    expect(log.body).toContain("2-step verification no longer required");
  });

  it("records nothing when the requirement is already as asked", async () => {
    const admin = await superadminBrowser();
    const person = await createUser(signon.ctx);
    const response = await admin.submit(`/users/${person.uid}`, `/users/${person.uid}/two-step-requirement`, { required: "no" });
    expect(response.statusCode).toBe(303);
    expect(await mandateEvents()).toEqual([]);
  });

  it("refuses a post without a valid CSRF token (403), an unknown value (400), and people who may not manage the person (403)", async () => {
    const admin = await superadminBrowser();
    const person = await createUser(signon.ctx);
    expect((await admin.postForm(`/users/${person.uid}/two-step-requirement`, { _csrf: "forged", required: "yes" })).statusCode).toBe(403);
    expect((await admin.submit(`/users/${person.uid}`, `/users/${person.uid}/two-step-requirement`, { required: "maybe" })).statusCode).toBe(400);
    const other = await createOrganisation(signon.ctx, { slug: "other", name: "Other" });
    const orgAdmin = await createUser(signon.ctx, { role: "organisation_admin", organisationId: other.id });
    const orgAdminBrowser = await signedInBrowser(signon.app, orgAdmin.email, defaultPassword);
    expect((await orgAdminBrowser.submit("/users", `/users/${person.uid}/two-step-requirement`, { required: "yes" })).statusCode).toBe(403);
    const normal = await signedInBrowser(signon.app, (await createUser(signon.ctx)).email, defaultPassword);
    expect((await normal.submit("/account", `/users/${person.uid}/two-step-requirement`, { required: "yes" })).statusCode).toBe(403);
    expect((await reload(person)).twoStepRequired).toBe(false);
    expect(await mandateEvents()).toEqual([]);
  });
});

describe("POST /organisations/:id/two-step", () => {
  it("requires 2-step verification of everyone in the organisation, audited, and no one else", async () => {
    const admin = await superadminBrowser();
    const organisation = await createOrganisation(signon.ctx, { slug: "cabinet-office", name: "Cabinet Office" });
    const member = await createUser(signon.ctx, { organisationId: organisation.id });
    const outsider = await createUser(signon.ctx);

    const page = await admin.get(`/organisations/${organisation.id}`);
    expect(page.body).toContain("Not required of everyone in this organisation.");
    const response = await admin.submit(`/organisations/${organisation.id}`, `/organisations/${organisation.id}/two-step`, { required: "yes" });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(`/organisations/${organisation.id}`);
    const after = await admin.follow(response);
    expect(after.body).toContain("Everyone in Cabinet Office must use 2-step verification.");
    expect(after.body).toContain("Stop requiring 2-step verification");
    expect(await sentToSetUpAtSignIn(member)).toBe(true);
    expect(await sentToSetUpAtSignIn(outsider)).toBe(false);
    expect((await admin.get(`/users/${member.uid}`)).body).toContain("<dt>2-step required</dt><dd>Yes, by their organisation</dd>");

    await admin.submit(`/organisations/${organisation.id}`, `/organisations/${organisation.id}/two-step`, { required: "no" });
    expect(await sentToSetUpAtSignIn(member)).toBe(false);
    const recorded = (await events()).filter((event) => event.action.startsWith("organisation_two_step"));
    const details = { organisation_id: organisation.id, slug: "cabinet-office" };
    expect(recorded.map(({ action, details }) => ({ action, details }))).toEqual([
      { action: "organisation_two_step_required", details },
      { action: "organisation_two_step_requirement_removed", details },
    ]);
  });

  it("is for superadmins only (403), needs a valid CSRF token (403), and answers 404 for an unknown organisation", async () => {
    const organisation = await createOrganisation(signon.ctx, { slug: "org", name: "Org" });
    const adminBrowser = await browserWithTwoStep("admin");
    expect((await adminBrowser.submit("/account", `/organisations/${organisation.id}/two-step`, { required: "yes" })).statusCode).toBe(403);
    const superadmin = await superadminBrowser();
    expect((await superadmin.postForm(`/organisations/${organisation.id}/two-step`, { _csrf: "forged", required: "yes" })).statusCode).toBe(403);
    expect((await superadmin.submit("/organisations", `/organisations/${crypto.randomUUID()}/two-step`, { required: "yes" })).statusCode).toBe(404);
    const [stored] = await signon.ctx.db.select().from(organisations).where(eq(organisations.id, organisation.id));
    expect(stored?.twoStepRequired).toBe(false);
  });
});

describe("exemptions from 2-step verification", () => {
  it("lift an organisation's requirement until the day they end, audited and shown on the user page", async () => {
    const superadmin = await superadminBrowser();
    const organisation = await createOrganisation(signon.ctx, { slug: "org", name: "Org" });
    await signon.ctx.db.update(organisations).set({ twoStepRequired: true }).where(eq(organisations.id, organisation.id));
    const member = await createUser(signon.ctx, { organisationId: organisation.id });
    expect(await sentToSetUpAtSignIn(member)).toBe(true);

    const endsOn = dayAfter(3);
    const response = await superadmin.submit(`/users/${member.uid}`, `/users/${member.uid}/two-step-exemption`, {
      reason: " Cannot use a phone at work ",
      ends_on: endsOn,
    });
    expect(response.statusCode).toBe(303);
    const page = await superadmin.follow(response);
    expect(page.body).toContain(`${member.name} is exempt from 2-step verification until ${endsOn} 00:00 UTC.`);
    expect(page.body).toContain("<dt>2-step required</dt><dd>No: exempt from their organisation</dd>");
    expect(page.body).toContain(`<dt>2-step exemption</dt><dd>Cannot use a phone at work (until ${endsOn} 00:00 UTC)</dd>`);
    expect(await sentToSetUpAtSignIn(member)).toBe(false);
    const [exempted] = await mandateEvents();
    expect(exempted).toMatchObject({
      action: "two_step_exempted",
      subjectUid: member.uid,
      details: { reason: "Cannot use a phone at work", until: `${endsOn}T00:00:00.000Z` },
    });
    expect((await superadmin.get(`/users/${member.uid}/events`)).body).toContain(
      `Exempted from 2-step verification (reason: Cannot use a phone at work) until ${endsOn}`,
    );

    // The day it ends, it no longer applies.
    signon.clock.set(new Date(`${endsOn}T00:00:00.000Z`));
    expect(await sentToSetUpAtSignIn(member)).toBe(true);
    const later = await superadminBrowser();
    expect((await later.get(`/users/${member.uid}`)).body).toContain(`(ended ${endsOn} 00:00 UTC)`);
  });

  it("can be removed by a superadmin, audited", async () => {
    const superadmin = await superadminBrowser();
    const member = await createUser(signon.ctx);
    await signon.ctx.db.update(users).set({ twoStepRequired: true }).where(eq(users.uid, member.uid));
    await superadmin.submit(`/users/${member.uid}`, `/users/${member.uid}/two-step-exemption`, { reason: "Travelling", ends_on: dayAfter(10) });
    expect(await sentToSetUpAtSignIn(member)).toBe(false);

    const removed = await superadmin.submit(`/users/${member.uid}`, `/users/${member.uid}/two-step-exemption/remove`);
    expect(removed.statusCode).toBe(303);
    expect(await sentToSetUpAtSignIn(member)).toBe(true);
    expect((await mandateEvents()).map((event) => event.action)).toEqual(["two_step_exempted", "two_step_exemption_removed"]);
    const stored = await reload(member);
    expect([stored.twoStepExemptionReason, stored.twoStepExemptUntil]).toEqual([null, null]);
    const again = await superadmin.submit(`/users/${member.uid}`, `/users/${member.uid}/two-step-exemption/remove`);
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain(`${member.name} has no exemption`);
  });

  it.each([
    ["no reason", { reason: "  ", ends_on: "2026-03-01" }, "Enter the reason for the exemption"],
    ["a reason too long", { reason: "x".repeat(501), ends_on: "2026-03-01" }, "Enter a reason of at most 500 characters"],
    ["no end", { reason: "Travelling", ends_on: "" }, "Enter the day the exemption ends as a date, such as 2027-01-31"],
    ["a day that does not exist", { reason: "Travelling", ends_on: "2026-02-30" }, "Enter the day the exemption ends as a date, such as 2027-01-31"],
    ["today", { reason: "Travelling", ends_on: "today" }, "Enter a day after today"],
  ])("answers %s with the user page and the message next to the field (400), and records nothing", async (_case, fields, message) => {
    signon.clock.set(new Date("2026-01-15T09:00:00.000Z"));
    const superadmin = await superadminBrowser();
    const member = await createUser(signon.ctx);
    const posted = { ...fields, ends_on: fields.ends_on === "today" ? "2026-01-15" : fields.ends_on };
    const response = await superadmin.submit(`/users/${member.uid}`, `/users/${member.uid}/two-step-exemption`, posted);
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain(message);
    expect(response.body).toMatch(/aria-invalid="true"/);
    expect((await reload(member)).twoStepExemptionReason).toBeNull();
    expect(await mandateEvents()).toEqual([]);
  });

  it("cannot lift a role's requirement: a person whose role requires it cannot be exempted (400)", async () => {
    const superadmin = await superadminBrowser();
    const admin = await createUser(signon.ctx, { role: "admin" });
    const page = await superadmin.get(`/users/${admin.uid}`);
    expect(page.body).toContain("Everyone with this role must use 2-step verification (SIGNON_TWO_STEP_REQUIRED_ROLES); an exemption cannot lift that.");
    expect(page.body).not.toContain(`action="/users/${admin.uid}/two-step-exemption"`);
    const response = await superadmin.submit(`/users/${admin.uid}`, `/users/${admin.uid}/two-step-exemption`, { reason: "Please", ends_on: dayAfter(5) });
    expect(response.statusCode).toBe(400);
    expect((await reload(admin)).twoStepExemptionReason).toBeNull();
    expect(await sentToSetUpAtSignIn(admin)).toBe(true);
  });

  it("are set by superadmins only: an admin's post is refused (403) and the form is not shown to them", async () => {
    const adminBrowser = await browserWithTwoStep("admin");
    const member = await createUser(signon.ctx);
    await signon.ctx.db.update(users).set({ twoStepRequired: true }).where(eq(users.uid, member.uid));
    expect((await adminBrowser.get(`/users/${member.uid}`)).body).not.toContain("two-step-exemption");
    const response = await adminBrowser.submit(`/users/${member.uid}`, `/users/${member.uid}/two-step-exemption`, { reason: "Travelling", ends_on: dayAfter(5) });
    expect(response.statusCode).toBe(403);
    expect((await adminBrowser.submit(`/users/${member.uid}`, `/users/${member.uid}/two-step-exemption/remove`)).statusCode).toBe(403);
    expect((await reload(member)).twoStepExemptionReason).toBeNull();
  });
});

describe("GET /users?two_step=", () => {
  it("filters by set up (an app or a passkey), not set up, required but not set up, and exempt", async () => {
    const superadmin = await superadminBrowser();
    const organisation = await createOrganisation(signon.ctx, { slug: "org", name: "Org" });
    await signon.ctx.db.update(organisations).set({ twoStepRequired: true }).where(eq(organisations.id, organisation.id));
    const named = async (name: string, options: Parameters<typeof createUser>[1], changes: Partial<User> = {}) => {
      const user = await createUser(signon.ctx, { name, ...options });
      if (Object.keys(changes).length > 0) await signon.ctx.db.update(users).set(changes).where(eq(users.uid, user.uid));
    };
    const now = signon.clock.now();
    const later = new Date(now.getTime() + day * 1000);
    await named("Ada Admin", { role: "admin" });
    await named("Ola Withcode", {}, { otpEnabledAt: now });
    await named("Kai Passkey", { organisationId: organisation.id }, { passkeyCount: 1 });
    await named("Nia Nothing", {});
    await named("Mo Member", { organisationId: organisation.id });
    await named("Pat Personal", {}, { twoStepRequired: true });
    await named("Ed Exempt", { organisationId: organisation.id }, { twoStepExemptionReason: "Travelling", twoStepExemptUntil: later });
    await named("Len Lapsed", { organisationId: organisation.id }, { twoStepExemptionReason: "Travelling", twoStepExemptUntil: now });

    const listed = async (filter: string) => {
      const page = await superadmin.get(`/users?two_step=${filter}`);
      expect(page.statusCode).toBe(200);
      return [...page.body.matchAll(/<th scope="row"><a href="\/users\/[^"]+">([^<]+)<\/a><\/th>/g)].map((match) => match[1]).filter((name) => !name?.startsWith("User "));
    };
    expect(await listed("on")).toEqual(["Kai Passkey", "Ola Withcode"]);
    expect(await listed("off")).toEqual(["Ada Admin", "Ed Exempt", "Len Lapsed", "Mo Member", "Nia Nothing", "Pat Personal"]);
    expect(await listed("missing")).toEqual(["Ada Admin", "Len Lapsed", "Mo Member", "Pat Personal"]);
    expect(await listed("exempt")).toEqual(["Ed Exempt"]);
    const page = await superadmin.get("/users?two_step=missing");
    expect(page.body).toContain('<option value="missing" selected>Required but not set up</option>');
    expect((await superadmin.get("/users?two_step=sometimes")).statusCode).toBe(400);
  });
});
