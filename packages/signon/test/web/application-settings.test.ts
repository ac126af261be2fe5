import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { processInvitationBatches, startInvitationBatch } from "../../src/accounts/invitation-batches.js";
import { inviteUser } from "../../src/accounts/invitations.js";
import { createUser as createAccount } from "../../src/accounts/manage-users.js";
import { grantPermissions } from "../../src/applications/permissions.js";
import { applications, auditEvents, pushDeliveries, userPermissions } from "../../src/db/schema.js";
import { InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { authorizeUrl } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";
import { linkMailedTo, strongPassword } from "./account-support.js";

const { database, signon } = await useTestSignon();
const db = database.db;

async function superadmin(): Promise<InjectBrowser> {
  const user = await createUser(signon.ctx, { role: "superadmin" });
  return signedInBrowser(signon.app, user.email, defaultPassword);
}

function editFields(overrides: Record<string, string> = {}) {
  return {
    name: "Publisher",
    redirect_uris: "https://publisher.example/auth/callback",
    home_uri: "https://publisher.example/",
    push_base_url: "",
    permissions: "admin, editor",
    delegatable_permissions: "",
    default_permissions: "",
    permissions_not_grantable_in_ui: "",
    push_enabled: "yes",
    ...overrides,
  };
}

async function applicationRow(id: string) {
  const [row] = await db.select().from(applications).where(eq(applications.id, id));
  return row;
}

describe("POST /applications/:id (name, API only, pushes, default and web-grantable permissions)", () => {
  it("renames the application and saves the new settings, with an audit event naming both names", async () => {
    const client = await createApp(signon.ctx, { name: "Publisher", redirectUris: ["https://publisher.example/auth/callback"], homeUri: "https://publisher.example/", permissions: ["admin", "editor"] });
    const browser = await superadmin();
    const page = await browser.get(`/applications/${client.application.id}`);
    expect(page.body).toContain('name="name"');
    expect(page.body).toContain('id="push_enabled-yes" name="push_enabled" value="yes" checked');

    const response = await browser.submit(
      `/applications/${client.application.id}`,
      `/applications/${client.application.id}`,
      editFields({ name: "Publishing", api_only: "yes", push_enabled: "no", default_permissions: "signin", permissions_not_grantable_in_ui: "admin" }),
    );
    expect(response.statusCode).toBe(303);
    expect((await browser.follow(response)).body).toContain("Publishing is saved.");
    expect(await applicationRow(client.application.id)).toMatchObject({
      name: "Publishing",
      apiOnly: true,
      pushEnabled: false,
      defaultPermissions: ["signin"],
      permissionsNotGrantableInUi: ["admin"],
    });
    const [event] = await db.select().from(auditEvents).where(eq(auditEvents.action, "application_updated"));
    expect(event?.details).toEqual({
      changed: ["apiOnly", "defaultPermissions", "name", "permissionsNotGrantableInUi", "pushEnabled"],
      name_before: "Publisher",
      name: "Publishing",
    });
  });

  it("answers 400 for a taken name, a blank name or flags naming unsupported permissions, and changes nothing", async () => {
    await createApp(signon.ctx, { name: "Taken" });
    const client = await createApp(signon.ctx, { name: "Publisher", redirectUris: ["https://publisher.example/auth/callback"], homeUri: "https://publisher.example/", permissions: ["admin", "editor"] });
    const before = await applicationRow(client.application.id);
    const browser = await superadmin();
    const url = `/applications/${client.application.id}`;
    const taken = await browser.submit(url, url, editFields({ name: "Taken" }));
    expect(taken.statusCode).toBe(400);
    expect(taken.body).toContain('id="name-error">An application named Taken already exists');
    const blank = await browser.submit(url, url, editFields({ name: "  " }));
    expect(blank.statusCode).toBe(400);
    const unknown = await browser.submit(url, url, editFields({ default_permissions: "reviewer", permissions_not_grantable_in_ui: "owner", push_enabled: "maybe", api_only: "sure" }));
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('id="default_permissions-error">Default permissions must be supported ones: reviewer is not');
    expect(unknown.body).toContain('id="permissions_not_grantable_in_ui-error">');
    expect(unknown.body).toContain('id="push_enabled-error">Choose on or off');
    expect(unknown.body).toContain('id="api_only-error">');
    expect(await applicationRow(client.application.id)).toEqual(before);
    expect(await db.select().from(auditEvents).where(eq(auditEvents.action, "application_updated"))).toEqual([]);
  });
});

describe("POST /applications/:id from a form without the new fields", () => {
  it("keeps the name, the default and web-grantable permissions and the push switch as they are", async () => {
    const client = await createApp(signon.ctx, {
      name: "Kept",
      redirectUris: ["https://kept.example/cb"],
      permissions: ["admin"],
      defaultPermissions: ["signin"],
      permissionsNotGrantableInUi: ["admin"],
      pushEnabled: false,
    });
    const browser = await superadmin();
    const url = `/applications/${client.application.id}`;
    const saved = await browser.submit(url, url, { redirect_uris: "https://kept.example/cb", home_uri: "https://kept.example/", push_base_url: "", permissions: "admin", delegatable_permissions: "" });
    expect(saved.statusCode).toBe(303);
    expect(await applicationRow(client.application.id)).toMatchObject({
      name: "Kept",
      homeUri: "https://kept.example/",
      defaultPermissions: ["signin"],
      permissionsNotGrantableInUi: ["admin"],
      pushEnabled: false,
    });
  });
});

describe("an API-only application", () => {
  it("refuses sign-in at /oauth/authorize with a clear error, and is left off dashboards and people's permission grids", async () => {
    const client = await createApp(signon.ctx, { name: "Search API", homeUri: "https://search.example/", apiOnly: true });
    const visible = await createApp(signon.ctx, { name: "Visible", homeUri: "https://visible.example/" });
    const person = await createUser(signon.ctx, { permissions: { "Search API": ["signin"], Visible: ["signin"] } });

    const browser = await signedInBrowser(signon.app, person.email, defaultPassword);
    const authorize = await browser.get(authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s" }));
    expect(authorize.statusCode).toBe(400);
    expect(authorize.body).toContain("Search API is used by API users only: nobody signs in to it through Sign-on.");
    expect(authorize.headers.location).toBeUndefined();

    const dashboard = await browser.get("/");
    expect(dashboard.body).toContain("Visible");
    expect(dashboard.body).not.toContain("Search API");

    const admin = await superadmin();
    const grid = await admin.get(`/users/${person.uid}/permissions`);
    expect(grid.body).toContain(`value="${visible.application.id}:signin"`);
    expect(grid.body).not.toContain(client.application.id);
    const ticked = await admin.submit(`/users/${person.uid}/permissions`, `/users/${person.uid}/permissions`, { permissions: `${client.application.id}:admin` });
    expect(ticked.statusCode).toBeGreaterThanOrEqual(400);
    expect(ticked.statusCode).toBeLessThan(500);
    expect(await db.select().from(userPermissions).where(and(eq(userPermissions.userUid, person.uid), eq(userPermissions.permission, "admin")))).toEqual([]);
  });
});

describe("pushes switched off", () => {
  it("queues nothing for that application, and again once switched on", async () => {
    const quiet = await createApp(signon.ctx, { name: "Quiet", pushEnabled: false });
    await createApp(signon.ctx, { name: "Loud" });
    const person = await createUser(signon.ctx);
    await grantPermissions(signon.ctx, { email: person.email, application: "Quiet", permissions: ["signin"] });
    await grantPermissions(signon.ctx, { email: person.email, application: "Loud", permissions: ["signin"] });
    const queued = await db.select({ applicationId: pushDeliveries.applicationId }).from(pushDeliveries);
    expect(queued.map((row) => row.applicationId)).not.toContain(quiet.application.id);
    expect(queued).toHaveLength(1);

    const browser = await superadmin();
    const url = `/applications/${quiet.application.id}`;
    const on = await browser.submit(url, url, editFields({ name: "Quiet", redirect_uris: quiet.redirectUri, home_uri: "", permissions: "admin", push_enabled: "yes" }));
    expect(on.statusCode).toBe(303);
    await grantPermissions(signon.ctx, { email: person.email, application: "Quiet", permissions: ["admin"] });
    expect(await db.select().from(pushDeliveries).where(eq(pushDeliveries.applicationId, quiet.application.id))).toHaveLength(1);
  });
});

describe("default permissions", () => {
  it("are granted to a person created with a password and at invitation acceptance, audited, and not to API users", async () => {
    const client = await createApp(signon.ctx, { name: "Intranet", permissions: ["reader"], defaultPermissions: ["reader", "signin"] });
    await createApp(signon.ctx, { name: "Hidden", defaultPermissions: ["signin"], apiOnly: true });
    const created = await createUser(signon.ctx);
    const held = async (uid: string) =>
      (await db.select().from(userPermissions).where(eq(userPermissions.userUid, uid))).map((row) => `${row.applicationId === client.application.id ? "Intranet" : "other"}:${row.permission}`).sort();
    expect(await held(created.uid)).toEqual(["Intranet:reader", "Intranet:signin"]);
    const [event] = await db.select().from(auditEvents).where(and(eq(auditEvents.action, "permissions_granted"), eq(auditEvents.subjectUid, created.uid)));
    expect(event?.details).toEqual({ permissions: ["reader", "signin"], reason: "default" });

    const inviter = await createUser(signon.ctx, { role: "admin" });
    const { user: invited } = await inviteUser(signon.ctx, { email: "invited@example.org", name: "In Vited", role: "normal", organisationId: null }, inviter, { ip: null, userAgent: null });
    expect(await held(invited.uid)).toEqual([]);
    const link = await linkMailedTo(signon.ctx, "invited@example.org", "/invitations/");
    const password = strongPassword();
    const accepted = await new InjectBrowser(signon.app).submit(link, link, { password, confirmation: password });
    expect(accepted.statusCode).toBe(303);
    expect(await held(invited.uid)).toEqual(["Intranet:reader", "Intranet:signin"]);
  });
});

describe("default permissions, once for every way a person is created", () => {
  const noOrigin = { ip: null, userAgent: null };
  async function grantsOn(applicationId: string, uid: string) {
    const held = (await db.select().from(userPermissions).where(and(eq(userPermissions.userUid, uid), eq(userPermissions.applicationId, applicationId)))).map((row) => row.permission).sort();
    const events = (await db.select().from(auditEvents).where(and(eq(auditEvents.action, "permissions_granted"), eq(auditEvents.subjectUid, uid), eq(auditEvents.applicationId, applicationId))))
      .map((event) => event.details);
    return { held, events };
  }
  async function choosePassword(link: string) {
    const password = strongPassword();
    const response = await new InjectBrowser(signon.app).submit(link, link, { password, confirmation: password });
    expect(response.statusCode).toBe(303);
  }

  it("an invitation that also grants a default permission grants it once, audited once", async () => {
    const wiki = await createApp(signon.ctx, { name: "Team wiki", permissions: ["editor"], defaultPermissions: ["signin"] });
    const inviter = await createUser(signon.ctx, { role: "admin" });
    const email = "twice@example.org";
    const { user } = await inviteUser(
      signon.ctx,
      { email, name: "Not Twice", role: "normal", organisationId: null, permissions: [`${wiki.application.id}:signin`, `${wiki.application.id}:editor`] },
      inviter,
      noOrigin,
    );
    await choosePassword(await linkMailedTo(signon.ctx, email, "/invitations/"));
    expect(await grantsOn(wiki.application.id, user.uid)).toEqual({ held: ["editor", "signin"], events: [{ permissions: ["editor", "signin"] }] });
  });

  it("a batch invitation's row gets them once, on acceptance, beside the batch's own permissions", async () => {
    const board = await createApp(signon.ctx, { name: "Notice board", permissions: ["poster"], defaultPermissions: ["signin"] });
    const inviter = await createUser(signon.ctx, { role: "admin" });
    const email = "from-file@example.org";
    const batchId = await startInvitationBatch(
      signon.ctx,
      inviter,
      { role: "normal", organisationId: null, permissions: [`${board.application.id}:poster`] },
      [{ line: 2, name: "From File", email, organisation: null }],
      noOrigin,
    );
    await processInvitationBatches(signon.ctx, { batchId });
    const [invited] = await db.select().from(auditEvents).where(and(eq(auditEvents.action, "user_invited"), eq(auditEvents.actorUid, inviter.uid)));
    expect((await grantsOn(board.application.id, invited?.subjectUid ?? "")).held).toEqual([]);
    await choosePassword(await linkMailedTo(signon.ctx, email, "/invitations/"));
    expect(await grantsOn(board.application.id, invited?.subjectUid ?? "")).toEqual({
      held: ["poster", "signin"],
      events: expect.arrayContaining([{ permissions: ["poster"] }, { permissions: ["signin"], reason: "default" }]) as unknown,
    });
    expect((await grantsOn(board.application.id, invited?.subjectUid ?? "")).events).toHaveLength(2);
  });

  it("someone created without a password (signon users create) gets them when they set one through a reset link", async () => {
    const notes = await createApp(signon.ctx, { name: "Field notes", defaultPermissions: ["signin"] });
    const person = await createAccount(signon.ctx, { email: "later@example.org", name: "Pass Word Later" });
    expect((await grantsOn(notes.application.id, person.uid)).held).toEqual([]);
    expect((await new InjectBrowser(signon.app).submit("/password-reset", "/password-reset", { email: person.email })).statusCode).toBe(303);
    await choosePassword(await linkMailedTo(signon.ctx, person.email, "/password-reset/"));
    expect(await grantsOn(notes.application.id, person.uid)).toEqual({ held: ["signin"], events: [{ permissions: ["signin"], reason: "default" }] });
  });
});

describe("permissions not grantable from the web interface", () => {
  it("are not offered in the grid, a post ticking one is refused, and the CLI's grant still shows as held", async () => {
    const client = await createApp(signon.ctx, { name: "Finance", permissions: ["approver", "viewer"], permissionsNotGrantableInUi: ["approver"] });
    const person = await createUser(signon.ctx);
    const browser = await superadmin();
    const url = `/users/${person.uid}/permissions`;
    const grid = await browser.get(url);
    expect(grid.body).toContain(`value="${client.application.id}:viewer"`);
    expect(grid.body).not.toContain(`value="${client.application.id}:approver"`);
    const refused = await browser.submit(url, url, { permissions: `${client.application.id}:approver` });
    expect(refused.statusCode).toBe(403);
    expect(await db.select().from(userPermissions).where(eq(userPermissions.userUid, person.uid))).toEqual([]);

    await grantPermissions(signon.ctx, { email: person.email, application: "Finance", permissions: ["approver"] });
    const after = await browser.get(url);
    expect(after.body).toMatch(new RegExp(`value="${client.application.id}:approver" checked disabled`));
  });
});
