import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { grantPermissions } from "../../src/applications/permissions.js";
import { accessTokens, applications, auditEvents, grants, userPermissions, users } from "../../src/db/schema.js";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { sha256Hex } from "../../src/security/random.js";
import { signedInBrowser, type InjectBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { getUserJson } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();
const db = database.db;

async function browserFor(role: "superadmin" | "admin" | "organisation_admin" | "normal"): Promise<InjectBrowser> {
  const organisation = role === "organisation_admin" ? await createOrganisation(signon.ctx, { slug: "org-of-admin", name: "Org" }) : undefined;
  const user = await createUser(signon.ctx, { role, organisationId: organisation?.id });
  return signedInBrowser(signon.app, user.email, defaultPassword);
}

const tokenPattern = /<p class="secret"[^>]*>([0-9a-f]{64})<\/p>/;

describe("GET /api-users", () => {
  it("lists API users, not people", async () => {
    await createApiUser(signon.ctx, { name: "Reporting service", email: "reporting@example.org" });
    const browser = await browserFor("superadmin");
    const response = await browser.get("/api-users");
    expect(response.statusCode).toBe(200);
    expect(response.body).toMatch(/Reporting service<\/a><\/th>\s*<td>reporting@example.org<\/td>/);
    expect(response.body.match(/<th scope="row">/g)).toHaveLength(1);
  });

  it("pages 50 at a time by name, with keyset links", async () => {
    for (let i = 0; i < 51; i++) await createApiUser(signon.ctx, { name: `Service ${String(i).padStart(2, "0")}`, email: `service${i}@example.org` });
    const browser = await browserFor("superadmin");
    const names = (body: string) => [...body.matchAll(/<a href="\/api-users\/[0-9a-f-]+">([^<]*)<\/a>/g)].map((match) => match[1]);
    const first = await browser.get("/api-users");
    expect(names(first.body)).toHaveLength(50);
    expect(names(first.body)[0]).toBe("Service 00");
    const next = /<a href="([^"]*)" rel="next">/.exec(first.body)?.[1]?.replaceAll("&amp;", "&");
    expect(next).toMatch(/^\/api-users\?after=/);
    const second = await browser.get(next as string);
    expect(names(second.body)).toEqual(["Service 50"]);
    const previous = /<a href="([^"]*)" rel="prev">/.exec(second.body)?.[1]?.replaceAll("&amp;", "&");
    expect(names((await browser.get(previous as string)).body)[0]).toBe("Service 00");
    expect(names((await browser.get("/api-users?last=yes")).body).at(-1)).toBe("Service 50");
    for (const query of ["after=abc", "page=2", "last=no", `after=${encodeURIComponent(".x")}`]) expect((await browser.get(`/api-users?${query}`)).statusCode, query).toBe(400);
  });
});

describe("POST /api-users/new", () => {
  it("creates an API user and goes to its page", async () => {
    const browser = await browserFor("superadmin");
    const response = await browser.submit("/api-users/new", "/api-users/new", { name: "Importer", email: "importer@example.org" });
    expect(response.statusCode).toBe(303);
    const [created] = await db.select().from(users).where(eq(users.email, "importer@example.org"));
    expect(created).toMatchObject({ name: "Importer", isApiUser: true, passwordHash: null, role: "normal" });
    expect(response.headers.location).toBe(`/api-users/${created?.uid}`);
    const page = await browser.follow(response);
    expect(page.body).toContain("Importer is created.");
    expect(page.body).toContain("No token has been issued to this API user.");
    expect(await db.select().from(auditEvents).where(eq(auditEvents.action, "api_user_created"))).toHaveLength(1);
  });

  it("answers 400 with messages next to the fields, and creates nothing", async () => {
    const taken = await createUser(signon.ctx, { email: "taken@example.org" });
    const browser = await browserFor("superadmin");
    const before = (await db.select().from(users)).length;
    const bad = await browser.submit("/api-users/new", "/api-users/new", { name: " ", email: "not-an-address" });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/id="name-error">Enter a name/);
    expect(bad.body).toMatch(/id="email-error">Enter an e-mail address/);
    const duplicate = await browser.submit("/api-users/new", "/api-users/new", { name: "Dup", email: taken.email.toUpperCase() });
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.body).toMatch(/id="email-error">A user with e-mail/);
    expect((await db.select().from(users)).length).toBe(before);
  });

  it("refuses a post without a valid CSRF token", async () => {
    const browser = await browserFor("superadmin");
    await browser.get("/api-users/new");
    expect((await browser.postForm("/api-users/new", { name: "X", email: "x@example.org" })).statusCode).toBe(403);
    expect((await db.select().from(users).where(eq(users.email, "x@example.org")))).toEqual([]);
  });
});

describe("GET /api-users/:uid and its tokens", () => {
  it("issues a token with permissions, shows it once, lists it without the token, and revokes it by its grant", async () => {
    const client = await createApp(signon.ctx, { name: "Content API", permissions: ["read", "write"] });
    const apiUser = await createApiUser(signon.ctx, { name: "Indexer", email: "indexer@example.org" });
    const browser = await browserFor("superadmin");
    const page = await browser.get(`/api-users/${apiUser.uid}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<option value="${client.application.id}"`);

    const issued = await browser.submit(`/api-users/${apiUser.uid}`, `/api-users/${apiUser.uid}/tokens`, {
      application_id: client.application.id,
      permissions: "read",
      expires_in_days: "30",
    });
    expect(issued.statusCode).toBe(303);
    expect(issued.headers.location).toBe(`/api-users/${apiUser.uid}/new-token`);
    const shown = await browser.get(issued.headers.location as string);
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain("A token for Content API is issued to Indexer.");
    expect(shown.body).toContain("<dt>Permissions</dt><dd>read, signin</dd>");
    const token = tokenPattern.exec(shown.body)?.[1] as string;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    // A reload shows it no more.
    const again = await browser.get(issued.headers.location as string);
    expect(again.body).not.toContain(token);
    expect(again.body).toContain("cannot be shown again");
    const [stored] = await db.select().from(accessTokens).where(eq(accessTokens.userUid, apiUser.uid));
    expect(stored?.tokenHash).toBe(sha256Hex(token));
    expect(stored?.expiresAt.getTime()).toBe(signon.clock.now().getTime() + 30 * 24 * 3600 * 1000);
    const held = await db.select({ permission: userPermissions.permission }).from(userPermissions).where(eq(userPermissions.userUid, apiUser.uid));
    expect(held.map((row) => row.permission).sort()).toEqual(["read", "signin"]);
    const userJson = await getUserJson(signon.app, token);
    expect(userJson.statusCode).toBe(200);
    expect(userJson.json<{ user: { permissions: string[] } }>().user.permissions).toEqual(["read", "signin"]);

    const listed = await browser.get(`/api-users/${apiUser.uid}`);
    expect(listed.body).not.toContain(token);
    const row = /<tr>\s*<th scope="row">Content API<\/th>[\s\S]*?<\/tr>/.exec(listed.body)?.[0] ?? "";
    expect(row).toContain("<td>read, signin</td>");
    expect(row).toContain('<span class="tag">Active</span>');
    expect(row).toContain(stored?.expiresAt.toISOString());
    const [grant] = await db.select().from(grants).where(eq(grants.userUid, apiUser.uid));
    expect(row).toContain(`/tokens/${grant?.id}/revoke`);

    const revoked = await browser.submit(`/api-users/${apiUser.uid}`, `/api-users/${apiUser.uid}/tokens/${grant?.id}/revoke`, { confirm: "yes" });
    expect(revoked.statusCode).toBe(303);
    expect((await browser.follow(revoked)).body).toMatch(/<span class="tag suspended">Revoked<\/span>/);
    expect((await getUserJson(signon.app, token)).statusCode).toBe(401);
    const [event] = await db.select().from(auditEvents).where(eq(auditEvents.action, "api_token_revoked"));
    expect(event).toMatchObject({ subjectUid: apiUser.uid, applicationId: client.application.id, details: { grant_id: grant?.id } });
  });

  it("answers 400 next to the fields for a retired application, an unsupported permission or a bad expiry, and issues nothing", async () => {
    const client = await createApp(signon.ctx, { name: "Strict", permissions: ["read"] });
    const retired = await createApp(signon.ctx, { name: "Gone" });
    await db.update(applications).set({ retired: true }).where(eq(applications.id, retired.application.id));
    const apiUser = await createApiUser(signon.ctx, { name: "Bot", email: "bot@example.org" });
    const browser = await browserFor("superadmin");
    const url = `/api-users/${apiUser.uid}`;
    const unsupported = await browser.submit(url, `${url}/tokens`, { application_id: client.application.id, permissions: "delete", expires_in_days: "0" });
    expect(unsupported.statusCode).toBe(400);
    expect(unsupported.body).toMatch(/id="permissions-error">Strict does not support delete/);
    expect(unsupported.body).toMatch(/id="expires_in_days-error">Enter a whole number of days from 1 to 3650/);
    const gone = await browser.submit(url, `${url}/tokens`, { application_id: retired.application.id, permissions: "", expires_in_days: "30" });
    expect(gone.statusCode).toBe(400);
    expect(gone.body).toMatch(/id="application_id-error">Choose an application that is not retired/);
    expect(await db.select().from(grants)).toEqual([]);
    expect(await db.select().from(userPermissions).where(eq(userPermissions.userUid, apiUser.uid))).toEqual([]);
  });

  it("answers 404 for a person's uid, an unknown uid or another user's token", async () => {
    const client = await createApp(signon.ctx, { name: "Shared" });
    const person = await createUser(signon.ctx, { permissions: { Shared: ["signin"] } });
    const apiUser = await createApiUser(signon.ctx, { name: "Bot", email: "bot2@example.org" });
    await issueOperatorToken(signon.ctx, { email: person.email, application: client.application.name });
    const [personGrant] = await db.select().from(grants).where(eq(grants.userUid, person.uid));
    const browser = await browserFor("superadmin");
    expect((await browser.get(`/api-users/${person.uid}`)).statusCode).toBe(404);
    expect((await browser.get("/api-users/4a1c9f7e-1111-4a4a-8b8b-000000000000")).statusCode).toBe(404);
    expect((await browser.get("/api-users/zzz")).statusCode).toBe(404);
    const revoke = await browser.submit(`/api-users/${apiUser.uid}`, `/api-users/${apiUser.uid}/tokens/${personGrant?.id}/revoke`, { confirm: "yes" });
    expect(revoke.statusCode).toBe(404);
    expect((await db.select().from(grants).where(eq(grants.id, personGrant?.id as string)))[0]?.revokedAt).toBeNull();
  });
});

describe("who may manage API users", () => {
  for (const role of ["admin", "organisation_admin", "normal"] as const) {
    it(`gives ${role} 403 on every page and form of the section, and changes nothing`, async () => {
      const client = await createApp(signon.ctx, { name: "Guarded" });
      const apiUser = await createApiUser(signon.ctx, { name: "Bot", email: "guarded-bot@example.org" });
      await grantPermissions(signon.ctx, { email: apiUser.email, application: "Guarded", permissions: ["signin"] });
      const { accessToken } = await issueOperatorToken(signon.ctx, { email: apiUser.email, application: "Guarded" });
      const [grant] = await db.select().from(grants).where(eq(grants.userUid, apiUser.uid));
      const browser = await browserFor(role);
      const usersBefore = await db.select().from(users);
      const grantsBefore = await db.select().from(grants);
      const eventsBefore = (await db.select().from(auditEvents)).length;

      for (const url of ["/api-users", "/api-users/new", `/api-users/${apiUser.uid}`, `/api-users/${apiUser.uid}/tokens/${grant?.id}/revoke`]) {
        const response = await browser.get(url);
        expect(response.statusCode, url).toBe(403);
        expect(response.body).toContain("You cannot do that");
      }
      for (const [action, fields] of [
        ["/api-users/new", { name: "Evil", email: "evil@example.org" }],
        [`/api-users/${apiUser.uid}/tokens`, { application_id: client.application.id, permissions: "", expires_in_days: "30" }],
        [`/api-users/${apiUser.uid}/tokens/${grant?.id}/revoke`, { confirm: "yes" }],
      ] as const) {
        const response = await browser.submit("/", action, fields);
        expect(response.statusCode, action).toBe(403);
        expect(response.body).toContain("You cannot do that");
      }
      expect(await db.select().from(users)).toEqual(usersBefore);
      expect(await db.select().from(grants)).toEqual(grantsBefore);
      expect((await db.select().from(auditEvents)).length).toBe(eventsBefore);
      expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(200);
    });
  }
});
