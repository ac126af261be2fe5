import { eq } from "drizzle-orm";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { describe, expect, it } from "vitest";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { auditEvents, organisations, pushDeliveries } from "../../src/db/schema.js";
import { updateOrganisationRow } from "../../src/repositories/organisation-admin.js";
import { isUniqueViolation } from "../../src/repositories/unique-violation.js";
import { signedInBrowser, type InjectBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();
const db = database.db;

async function browserFor(role: "superadmin" | "admin" | "organisation_admin" | "normal", organisationId?: string): Promise<InjectBrowser> {
  const user = await createUser(signon.ctx, { role, organisationId });
  return signedInBrowser(signon.app, user.email, defaultPassword);
}

describe("GET /organisations", () => {
  it("lists each organisation with its slug, content id and number of users", async () => {
    const cabinet = await createOrganisation(signon.ctx, { slug: "cabinet-office", name: "Cabinet Office" });
    await createOrganisation(signon.ctx, { slug: "empty-body", name: "Empty Body" });
    await createUser(signon.ctx, { organisationId: cabinet.id });
    await createUser(signon.ctx, { organisationId: cabinet.id });
    const response = await (await browserFor("superadmin")).get("/organisations");
    expect(response.statusCode).toBe(200);
    const row = /<tr>\s*<th scope="row"><a href="\/organisations\/[^"]+">Cabinet Office<\/a><\/th>[\s\S]*?<\/tr>/.exec(response.body)?.[0] ?? "";
    expect(row).toContain("<code>cabinet-office</code>");
    expect(row).toContain(cabinet.contentId);
    expect(row).toContain("<td>2</td>");
    expect(/Empty Body<\/a><\/th>[\s\S]*?<td>(\d+)<\/td>\s*<\/tr>/.exec(response.body)?.[1]).toBe("0");
  });
});

describe("POST /organisations/new", () => {
  it("creates an organisation with a generated or given content id", async () => {
    const browser = await browserFor("superadmin");
    const created = await browser.submit("/organisations/new", "/organisations/new", { name: " Home Office ", slug: "home-office", content_id: "" });
    expect(created.statusCode).toBe(303);
    expect((await browser.follow(created)).body).toContain("Home Office is created.");
    const given = await browser.submit("/organisations/new", "/organisations/new", {
      name: "Treasury",
      slug: "treasury",
      content_id: "0B6AD8A4-2F4E-4F7C-9A36-3F1F3E2C6D11",
    });
    expect(given.statusCode).toBe(303);
    const rows = await db.select().from(organisations).orderBy(organisations.slug);
    expect(rows.map((row) => [row.slug, row.name])).toEqual([["home-office", "Home Office"], ["treasury", "Treasury"]]);
    expect(rows[0]?.contentId).toMatch(/^[0-9a-f-]{36}$/);
    expect(rows[1]?.contentId).toBe("0b6ad8a4-2f4e-4f7c-9a36-3f1f3e2c6d11");
    expect(await db.select().from(auditEvents).where(eq(auditEvents.action, "organisation_created"))).toHaveLength(2);
  });

  it("answers 400 with messages next to the fields, and creates nothing", async () => {
    await createOrganisation(signon.ctx, { slug: "taken", name: "Taken" });
    const browser = await browserFor("superadmin");
    const response = await browser.submit("/organisations/new", "/organisations/new", { name: "", slug: "Not A Slug", content_id: "nope" });
    expect(response.statusCode).toBe(400);
    expect(response.body).toMatch(/id="name-error">Enter a name of 1 to 200 characters/);
    expect(response.body).toMatch(/id="slug-error">Enter a slug of up to 100 lower-case letters/);
    expect(response.body).toMatch(/id="content_id-error">Enter a UUID/);
    expect(response.body).toContain('value="Not A Slug"');
    const duplicate = await browser.submit("/organisations/new", "/organisations/new", { name: "Again", slug: "taken", content_id: "" });
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.body).toMatch(/id="slug-error">Another organisation has the slug taken/);
    expect(await db.select().from(organisations)).toHaveLength(1);
  });

  it("refuses a post without a valid CSRF token", async () => {
    const browser = await browserFor("superadmin");
    await browser.get("/organisations/new");
    expect((await browser.postForm("/organisations/new", { name: "X", slug: "x", content_id: "" })).statusCode).toBe(403);
    expect((await browser.postForm("/organisations/new", { _csrf: "forged", name: "X", slug: "x", content_id: "" })).statusCode).toBe(403);
    expect(await db.select().from(organisations)).toHaveLength(0);
  });
});

describe("GET and POST /organisations/:id", () => {
  it("renames an organisation, with an audit event and no push when the slug stays", async () => {
    const organisation = await createOrganisation(signon.ctx, { slug: "dept", name: "Dept" });
    await createApp(signon.ctx, { name: "Tool" });
    await createUser(signon.ctx, { organisationId: organisation.id, permissions: { Tool: ["signin"] } });
    await db.delete(pushDeliveries);
    const browser = await browserFor("superadmin");
    expect((await browser.get(`/organisations/${organisation.id}`)).body).toContain('value="dept"');
    const response = await browser.submit(`/organisations/${organisation.id}`, `/organisations/${organisation.id}`, { name: "Department", slug: "dept" });
    expect(response.statusCode).toBe(303);
    expect((await db.select().from(organisations))[0]).toMatchObject({ name: "Department", slug: "dept", contentId: organisation.contentId });
    const [event] = await db.select().from(auditEvents).where(eq(auditEvents.action, "organisation_updated"));
    expect(event?.details).toEqual({ organisation_id: organisation.id, changed: ["name"] });
    expect(await db.select().from(pushDeliveries)).toEqual([]);
  });

  it("changes the slug and tells each application that issued a member a token (the slug is in /user.json)", async () => {
    const organisation = await createOrganisation(signon.ctx, { slug: "old-slug", name: "Moving" });
    const tool = await createApp(signon.ctx, { name: "Tool" });
    const member = await createUser(signon.ctx, { organisationId: organisation.id, permissions: { Tool: ["signin"] } });
    // A member who never signed in to Tool: it hears nothing of the new slug until they do.
    await createUser(signon.ctx, { organisationId: organisation.id, permissions: { Tool: ["signin"] } });
    const elsewhere = await createUser(signon.ctx, { permissions: { Tool: ["signin"] } });
    for (const { email } of [member, elsewhere]) await issueOperatorToken(signon.ctx, { email, application: "Tool" });
    await db.delete(pushDeliveries);
    const browser = await browserFor("superadmin");
    const response = await browser.submit(`/organisations/${organisation.id}`, `/organisations/${organisation.id}`, { name: "Moving", slug: "new-slug" });
    expect(response.statusCode).toBe(303);
    expect((await db.select().from(organisations))[0]?.slug).toBe("new-slug");
    const pushes = await db.select().from(pushDeliveries);
    expect(pushes.map((push) => [push.userUid, push.applicationId, push.kind, push.status])).toEqual([[member.uid, tool.application.id, "update", "pending"]]);
    const [event] = await db.select().from(auditEvents).where(eq(auditEvents.action, "organisation_updated"));
    expect(event?.details).toEqual({ organisation_id: organisation.id, changed: ["slug"], previous_slug: "old-slug", slug: "new-slug" });
  });

  it("refuses a slug another organisation has, or a bad one, with 400 and no change", async () => {
    const organisation = await createOrganisation(signon.ctx, { slug: "mine", name: "Mine" });
    await createOrganisation(signon.ctx, { slug: "theirs", name: "Theirs" });
    const browser = await browserFor("superadmin");
    const url = `/organisations/${organisation.id}`;
    const taken = await browser.submit(url, url, { name: "Mine", slug: "theirs" });
    expect(taken.statusCode).toBe(400);
    expect(taken.body).toMatch(/id="slug-error">Another organisation has the slug theirs/);
    const bad = await browser.submit(url, url, { name: "x".repeat(201), slug: "-bad-" });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="name-error"');
    expect(bad.body).toContain('id="slug-error"');
    expect((await db.select().from(organisations).where(eq(organisations.id, organisation.id)))[0]).toEqual(organisation);
  });

  it("recognises the database refusing a taken slug (two people saving at once)", async () => {
    const organisation = await createOrganisation(signon.ctx, { slug: "first", name: "First" });
    await createOrganisation(signon.ctx, { slug: "second", name: "Second" });
    const error = await updateOrganisationRow(db, organisation.id, { slug: "second" }).catch((caught: unknown) => caught);
    expect(isUniqueViolation(error)).toBe(true);
    expect(isUniqueViolation(new Error("other"))).toBe(false);
  });

  it("answers 404 for an unknown or malformed id", async () => {
    const browser = await browserFor("superadmin");
    expect((await browser.get("/organisations/4a1c9f7e-1111-4a4a-8b8b-000000000000")).statusCode).toBe(404);
    expect((await browser.get("/organisations/nope")).statusCode).toBe(404);
    expect((await browser.submit("/organisations", "/organisations/4a1c9f7e-1111-4a4a-8b8b-000000000000", { name: "A", slug: "a" })).statusCode).toBe(404);
  });
});

describe("who may manage organisations", () => {
  for (const role of ["admin", "organisation_admin", "normal"] as const) {
    it(`gives ${role} 403 on every page and form of the section, and changes nothing`, async () => {
      const organisation = await createOrganisation(signon.ctx, { slug: `own-${role.replace("_", "-")}`, name: "Own" });
      const browser = await browserFor(role, organisation.id);
      const before = await db.select().from(organisations);
      const eventsBefore = (await db.select().from(auditEvents)).length;
      for (const url of ["/organisations", "/organisations/new", `/organisations/${organisation.id}`]) {
        const response = await browser.get(url);
        expect(response.statusCode, url).toBe(403);
        expect(response.body).toContain("You cannot do that");
      }
      for (const [action, fields] of [
        ["/organisations/new", { name: "New", slug: "new", content_id: "" }],
        [`/organisations/${organisation.id}`, { name: "Renamed", slug: "renamed" }],
      ] as const) {
        const response = await browser.submit("/", action, fields);
        expect(response.statusCode, action).toBe(403);
        expect(response.body).toContain("You cannot do that");
      }
      expect(await db.select().from(organisations)).toEqual(before);
      expect((await db.select().from(auditEvents)).length).toBe(eventsBefore);
    });
  }
});
