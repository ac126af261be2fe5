import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { checkInvitation } from "../../src/accounts/invitations.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { auditEvents, organisations, users } from "../../src/db/schema.js";
import { findUserByEmail } from "../../src/repositories/users.js";
import { createApp, createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { listedNames, signedInAs, submitMany } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;
const db = ctx.db;

let made = 0;
/** An organisation under `parentId` (top level without one). */
async function organisation(name: string, parentId: string | null = null, closed = false) {
  return createOrganisation(ctx, { slug: `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${++made}`, name, parentId, closed });
}

/** Agency > Department > Unit, and a sibling of the department. */
async function tree() {
  const agency = await organisation("Agency");
  const department = await organisation("Department", agency.id);
  const unit = await organisation("Unit", department.id);
  const sibling = await organisation("Sibling", agency.id);
  return { agency, department, unit, sibling };
}

describe("super organisation admins", () => {
  it("list and manage the people of their organisation and of every organisation under it, nobody else", async () => {
    const { agency, department, unit, sibling } = await tree();
    const { browser } = await signedInAs(app, ctx, "super_organisation_admin", department.id);
    const colleague = await createUser(ctx, { name: "Colleague", organisationId: department.id });
    const below = await createUser(ctx, { name: "Below", organisationId: unit.id, role: "organisation_admin" });
    const above = await createUser(ctx, { name: "Above", organisationId: agency.id });
    const beside = await createUser(ctx, { name: "Beside", organisationId: sibling.id });
    const admin = await createUser(ctx, { name: "Admin", organisationId: unit.id, role: "admin" });
    const nowhere = await createUser(ctx, { name: "Nowhere" });

    const list = await browser.get("/users");
    expect(list.statusCode).toBe(200);
    expect(listedNames(list).filter((name) => !name.startsWith("User ")).sort()).toEqual(["Below", "Colleague"]);
    for (const person of [colleague, below]) expect((await browser.get(`/users/${person.uid}`)).statusCode, person.name).toBe(200);
    for (const person of [above, beside, admin, nowhere]) {
      expect((await browser.get(`/users/${person.uid}`)).statusCode, person.name).toBe(403);
      expect((await browser.get(`/users/${person.uid}/permissions`)).statusCode, person.name).toBe(403);
      const post = await submitMany(app, browser, `/users/${colleague.uid}`, `/users/${person.uid}`, { name: "Taken over", email: person.email, role: "normal", organisation: department.id });
      expect(post.statusCode, person.name).toBe(403);
    }
    expect((await db.select().from(users).where(eq(users.name, "Taken over")))).toEqual([]);
  });

  it("move people within their subtree and give roles up to their own, but no further", async () => {
    const { agency, department, unit, sibling } = await tree();
    const { browser } = await signedInAs(app, ctx, "super_organisation_admin", department.id);
    const person = await createUser(ctx, { name: "Mover", organisationId: department.id });
    const page = await browser.get(`/users/${person.uid}`);
    const offered = [...page.body.matchAll(/<option value="([^"]*)"[^>]*>([^<]*)<\/option>/g)].map((match) => match[2]);
    expect(offered).toEqual(expect.arrayContaining(["Super organisation admin", "Organisation admin", "Normal user", "Department", "Unit"]));
    expect(offered).not.toContain("Admin");
    expect(offered).not.toContain("Agency");
    expect(offered).not.toContain("Sibling");
    expect(offered).not.toContain("No organisation");

    const moved = await browser.submit(`/users/${person.uid}`, `/users/${person.uid}`, { name: "Mover", email: person.email, role: "super_organisation_admin", organisation: unit.id });
    expect(moved.statusCode).toBe(303);
    expect(await findUserByEmail(db, person.email)).toMatchObject({ organisationId: unit.id, role: "super_organisation_admin" });

    for (const [role, organisationId] of [["admin", unit.id], ["normal", sibling.id], ["normal", agency.id], ["normal", ""]] as const) {
      const refused = await browser.submit(`/users/${person.uid}`, `/users/${person.uid}`, { name: "Mover", email: person.email, role, organisation: organisationId });
      expect(refused.statusCode, `${role} ${organisationId}`).toBe(400);
    }
    expect(await findUserByEmail(db, person.email)).toMatchObject({ organisationId: unit.id, role: "super_organisation_admin" });
  });

  it("invite people into an organisation under theirs", async () => {
    const { unit, department } = await tree();
    const { browser } = await signedInAs(app, ctx, "super_organisation_admin", department.id);
    const response = await browser.submit("/users/new", "/users/new", { name: "New", email: "new-in-unit@example.org", role: "normal", organisation: unit.id });
    expect(response.statusCode).toBe(303);
    expect(await findUserByEmail(db, "new-in-unit@example.org")).toMatchObject({ organisationId: unit.id });
  });

  it("are managed by admins but not by organisation admins of their organisation", async () => {
    const { department } = await tree();
    const superOrganisationAdmin = await createUser(ctx, { role: "super_organisation_admin", organisationId: department.id });
    const { browser: organisationAdmin } = await signedInAs(app, ctx, "organisation_admin", department.id);
    const { browser: admin } = await signedInAs(app, ctx, "admin");
    expect((await organisationAdmin.get(`/users/${superOrganisationAdmin.uid}`)).statusCode).toBe(403);
    expect((await admin.get(`/users/${superOrganisationAdmin.uid}`)).statusCode).toBe(200);
    expect((await admin.get("/users/new")).body).toContain('value="super_organisation_admin"');
  });

  it("see in the permission filter only the permissions they may grant, and a tampered filter is ignored", async () => {
    const { department } = await tree();
    const publisher = (await createApp(ctx, { name: "Publisher", permissions: ["editor", "publisher"], delegatablePermissions: ["signin", "editor"] })).application;
    const finance = (await createApp(ctx, { name: "Finance", permissions: ["approver"] })).application;
    await createUser(ctx, { name: "Approver", organisationId: department.id, permissions: { Finance: ["signin", "approver"] } });
    await createUser(ctx, { name: "Editor", organisationId: department.id, permissions: { Publisher: ["signin", "editor"] } });
    for (const role of ["organisation_admin", "super_organisation_admin"] as const) {
      const { browser } = await signedInAs(app, ctx, role, department.id, { Publisher: ["signin"], Finance: ["signin"] });
      const list = await browser.get("/users");
      const filter = /<select id="permission" name="permission">([\s\S]*?)<\/select>/.exec(list.body)?.[1] ?? "";
      expect([...filter.matchAll(/<option value="([^"]*)"/g)].map((match) => match[1])).toEqual(["", `${publisher.id}:editor`, `${publisher.id}:signin`]);
      expect(filter).not.toContain("Finance");
      const tampered = await browser.get(`/users?permission=${finance.id}:approver`);
      expect(tampered.statusCode).toBe(200);
      expect(listedNames(tampered)).toContain("Editor");
      const offered = await browser.get(`/users?permission=${publisher.id}:editor`);
      expect(listedNames(offered)).toEqual(["Editor"]);
    }
  });
});

describe("organisation parents", () => {
  it("are set and shown by superadmins, and audited", async () => {
    const { agency, sibling } = await tree();
    const loose = await organisation("Loose");
    const { browser, uid } = await signedInAs(app, ctx, "superadmin");
    const url = `/organisations/${loose.id}`;
    const form = await browser.get(url);
    expect(form.body).toContain('<select id="parent" name="parent"');
    const saved = await browser.submit(url, url, { name: "Loose", slug: loose.slug, parent: sibling.id });
    expect(saved.statusCode).toBe(303);
    expect((await db.select().from(organisations).where(eq(organisations.id, loose.id)))[0]?.parentId).toBe(sibling.id);
    const [event] = await db.select().from(auditEvents).where(eq(auditEvents.action, "organisation_updated"));
    expect(event).toMatchObject({ actorUid: uid, details: { organisation_id: loose.id, changed: ["parentId"], parent_id: sibling.id } });
    const list = await browser.get("/organisations");
    expect(list.body).toMatch(new RegExp(`>Loose</a></th>\\s*<td><code>${loose.slug}</code></td>\\s*<td>Sibling</td>`));
    expect(list.body).toMatch(new RegExp(`>Agency</a></th>\\s*<td><code>${agency.slug}</code></td>\\s*<td>None</td>`));
    expect((await browser.get(url)).body).toMatch(/<dt>Parent<\/dt><dd>Sibling<\/dd>/);
  });

  it("never make a loop: an organisation under itself or under one below it is refused with 400", async () => {
    const { agency, department, unit } = await tree();
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const url = `/organisations/${agency.id}`;
    for (const parent of [agency.id, department.id, unit.id]) {
      const response = await browser.submit(url, url, { name: "Agency", slug: agency.slug, parent });
      expect(response.statusCode, parent).toBe(400);
      expect(response.body).toContain('id="parent-error"');
    }
    const choices = [...(await browser.get(url)).body.matchAll(/<option value="([^"]*)"/g)].map((match) => match[1]);
    expect(choices).not.toContain(department.id);
    expect(choices).not.toContain(unit.id);
    for (const bad of ["not-a-uuid", "4a1c9f7e-1111-4a4a-8b8b-000000000000"]) {
      expect((await browser.submit(url, url, { name: "Agency", slug: agency.slug, parent: bad })).statusCode, bad).toBe(400);
    }
    expect((await db.select().from(organisations).where(eq(organisations.id, agency.id)))[0]?.parentId).toBeNull();
  });

  it("can be given when creating an organisation", async () => {
    const { agency } = await tree();
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const response = await browser.submit("/organisations/new", "/organisations/new", { name: "Branch", slug: "branch", content_id: "", parent: agency.id, closed: "yes" });
    expect(response.statusCode).toBe(303);
    expect((await db.select().from(organisations).where(eq(organisations.slug, "branch")))[0]).toMatchObject({ parentId: agency.id, closed: true });
  });

  for (const role of ["admin", "super_organisation_admin", "organisation_admin"] as const) {
    it(`cannot be set by a ${role} (403, nothing changes)`, async () => {
      const { agency, department } = await tree();
      const { browser } = await signedInAs(app, ctx, role, department.id);
      const page = await browser.get("/account");
      const token = /name="_csrf" value="([^"]*)"/.exec(page.body)?.[1] ?? "";
      const response = await browser.postForm(`/organisations/${department.id}`, { _csrf: token, name: "Department", slug: department.slug, parent: "" });
      expect(response.statusCode).toBe(403);
      expect((await db.select().from(organisations).where(eq(organisations.id, department.id)))[0]?.parentId).toBe(agency.id);
    });
  }
});

describe("closed organisations", () => {
  it("are not offered on the invite and edit forms, and refused when posted; their people stay", async () => {
    const open = await organisation("Open");
    const closed = await organisation("Shut", null, true);
    const member = await createUser(ctx, { name: "Member", organisationId: closed.id });
    const { browser } = await signedInAs(app, ctx, "admin");
    const invite = await browser.get("/users/new");
    expect(invite.body).toContain(`value="${open.id}"`);
    expect(invite.body).not.toContain(`value="${closed.id}"`);
    const refused = await browser.submit("/users/new", "/users/new", { name: "New", email: "new-in-shut@example.org", role: "normal", organisation: closed.id });
    expect(refused.statusCode).toBe(400);
    expect(await findUserByEmail(db, "new-in-shut@example.org")).toBeNull();

    const memberPage = await browser.get(`/users/${member.uid}`);
    expect(memberPage.body).toMatch(new RegExp(`<option value="${closed.id}" selected>Shut \\(closed\\)</option>`));
    const stays = await browser.submit(`/users/${member.uid}`, `/users/${member.uid}`, { name: "Member renamed", email: member.email, role: "normal", organisation: closed.id });
    expect(stays.statusCode).toBe(303);
    expect(await findUserByEmail(db, member.email)).toMatchObject({ name: "Member renamed", organisationId: closed.id });
    const other = await createUser(ctx, { name: "Other", organisationId: open.id });
    const moveIn = await browser.submit(`/users/${other.uid}`, `/users/${other.uid}`, { name: "Other", email: other.email, role: "normal", organisation: closed.id });
    expect(moveIn.statusCode).toBe(400);
  });

  it("take nobody through any invitation, batches and the command line included", async () => {
    const closed = await organisation("Shut", null, true);
    await expect(checkInvitation(db, { email: "x@example.org", name: "X", role: "normal", organisationId: closed.id }, null)).rejects.toThrow("Shut is closed: nobody new can join it");
  });

  it("take no new people from their organisation admins", async () => {
    const closed = await organisation("Shut", null, true);
    const { browser } = await signedInAs(app, ctx, "organisation_admin", closed.id);
    const response = await browser.submit("/users/new", "/users/new", { name: "New", email: "new-by-admin@example.org", role: "normal" });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain("Your organisation is closed");
    expect(await findUserByEmail(db, "new-by-admin@example.org")).toBeNull();
  });

  it("are closed and reopened by superadmins and shown as closed in the list", async () => {
    const target = await organisation("Ending");
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const url = `/organisations/${target.id}`;
    expect((await browser.submit(url, url, { name: "Ending", slug: target.slug, parent: "", closed: "yes" })).statusCode).toBe(303);
    expect((await browser.get("/organisations")).body).toMatch(/>Ending<\/a> <span class="tag">Closed<\/span><\/th>/);
    const [event] = await db.select().from(auditEvents).where(eq(auditEvents.action, "organisation_updated"));
    expect(event?.details).toEqual({ organisation_id: target.id, changed: ["closed"], closed: true });
    expect((await browser.submit(url, url, { name: "Ending", slug: target.slug, parent: "" })).statusCode).toBe(303);
    expect((await db.select().from(organisations).where(eq(organisations.id, target.id)))[0]?.closed).toBe(false);
  });
});
