import { eq } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import { issueApiUserToken } from "../../src/accounts/api-users.js";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { grants, organisations } from "../../src/db/schema.js";
import { signedInBrowser, type InjectBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { webState } from "./web-state.js";
import { createTestOrganisation, signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

async function signedInBrowserOf(email: string): Promise<{ browser: InjectBrowser }> {
  return { browser: await signedInBrowser(app, email, defaultPassword) };
}

/** People of every role in two organisations, an application, an API user with a token, and an organisation. */
async function world() {
  const home = await createTestOrganisation(ctx);
  const away = await createTestOrganisation(ctx);
  const { application } = await createApp(ctx, { name: "Publisher", permissions: ["editor"], delegatablePermissions: ["signin", "editor"] });
  const superadmin = await createUser(ctx, { role: "superadmin" });
  const admin = await createUser(ctx, { role: "admin", organisationId: home.id });
  const homeOrganisationAdmin = await createUser(ctx, { role: "organisation_admin", organisationId: home.id });
  const awayPerson = await createUser(ctx, { organisationId: away.id, permissions: { Publisher: ["signin"] } });
  const awayOrganisationAdmin = await createUser(ctx, { role: "organisation_admin", organisationId: away.id });
  const nobody = await createUser(ctx);
  const apiUser = await createApiUser(ctx, { name: "Robot", email: "robot@example.org" });
  await issueApiUserToken(ctx, { user: apiUser, applicationId: application.id, permissions: [], expiresInDays: 30 }, superadmin.uid);
  const [grant] = await ctx.db.select({ id: grants.id }).from(grants).where(eq(grants.userUid, apiUser.uid));
  if (!grant) throw new Error("no grant");
  return { home, away, application, superadmin, admin, homeOrganisationAdmin, awayPerson, awayOrganisationAdmin, nobody, apiUser, grant };
}
type World = Awaited<ReturnType<typeof world>>;

/** Every page and action about one user, with fields that would be accepted from someone allowed. */
function userRoutes(uid: string, w: World, email: string): { method: "GET" | "POST"; url: string; fields?: Record<string, string | string[]> }[] {
  return [
    { method: "GET", url: `/users/${uid}` },
    { method: "GET", url: `/users/${uid}/permissions` },
    { method: "GET", url: `/users/${uid}/events` },
    { method: "POST", url: `/users/${uid}`, fields: { name: "Taken over", email, role: "normal", organisation: w.home.id } },
    { method: "POST", url: `/users/${uid}`, fields: { name: "Taken over", email, role: "normal" } },
    { method: "GET", url: `/users/${uid}/suspend` },
    { method: "GET", url: `/users/${uid}/reset-two-step` },
    { method: "POST", url: `/users/${uid}/suspend`, fields: { reason: "Because I can", confirm: "yes" } },
    { method: "POST", url: `/users/${uid}/unsuspend` },
    { method: "POST", url: `/users/${uid}/unlock` },
    { method: "POST", url: `/users/${uid}/reset-two-step`, fields: { confirm: "yes" } },
    { method: "POST", url: `/users/${uid}/two-step-requirement`, fields: { required: "yes" } },
    { method: "POST", url: `/users/${uid}/two-step-exemption`, fields: { reason: "Because I can", ends_on: "2030-01-01" } },
    { method: "POST", url: `/users/${uid}/two-step-exemption/remove` },
    { method: "POST", url: `/users/${uid}/permissions`, fields: { permissions: [`${w.application.id}:signin`, `${w.application.id}:editor`] } },
  ];
}

/** The superadmin-only sections. */
function sectionRoutes(w: World): { method: "GET" | "POST"; url: string; fields?: Record<string, string> }[] {
  const appFields = { redirect_uris: "https://x.example/cb", home_uri: "", push_base_url: "", permissions: "", delegatable_permissions: "" };
  return [
    ...["/applications", "/applications/new", `/applications/${w.application.id}`, `/applications/${w.application.id}/pushes`, `/applications/${w.application.id}/rotate-secret`, `/applications/${w.application.id}/retire`, `/applications/${w.application.id}/usage`, `/applications/${w.application.id}/usage.csv`, `/applications/${w.application.id}/secret`].map((url) => ({ method: "GET" as const, url })),
    ...["/api-users", "/api-users/new", `/api-users/${w.apiUser.uid}`, `/api-users/${w.apiUser.uid}/tokens/${w.grant.id}/revoke`, `/api-users/${w.apiUser.uid}/new-token`, "/organisations", "/organisations/new", `/organisations/${w.home.id}`].map((url) => ({ method: "GET" as const, url })),
    { method: "POST", url: "/applications/new", fields: { name: "Mine", ...appFields } },
    { method: "POST", url: `/applications/${w.application.id}`, fields: appFields },
    { method: "POST", url: `/applications/${w.application.id}/rotate-secret`, fields: { confirm: "yes" } },
    { method: "POST", url: `/applications/${w.application.id}/retire`, fields: { confirm: "yes" } },
    { method: "POST", url: `/applications/${w.application.id}/unretire` },
    { method: "POST", url: `/applications/${w.application.id}/pushes/1/retry` },
    { method: "POST", url: "/api-users/new", fields: { name: "Mine", email: "mine@example.org" } },
    { method: "POST", url: `/api-users/${w.apiUser.uid}/tokens`, fields: { application_id: w.application.id, permissions: "", expires_in_days: "30" } },
    { method: "POST", url: `/api-users/${w.apiUser.uid}/tokens/${w.grant.id}/revoke`, fields: { confirm: "yes" } },
    { method: "POST", url: `/api-users/${w.apiUser.uid}/auto-renewal`, fields: { token_auto_renewal: "yes" } },
    { method: "POST", url: `/api-users/${w.apiUser.uid}/renewed-tokens/${w.grant.id}/acknowledge` },
    { method: "POST", url: "/organisations/new", fields: { name: "Mine", slug: "mine", content_id: "" } },
    { method: "POST", url: `/organisations/${w.home.id}`, fields: { name: "Mine", slug: "mine" } },
    { method: "POST", url: `/organisations/${w.home.id}/two-step`, fields: { required: "yes" } },
  ];
}

async function csrfOf(browser: InjectBrowser): Promise<string> {
  const token = /name="_csrf" value="([^"]*)"/.exec((await browser.get("/account")).body)?.[1];
  if (token === undefined) throw new Error("no CSRF token on /account");
  return token;
}

async function send(appInstance: FastifyInstance, browser: InjectBrowser, csrf: string, route: { method: "GET" | "POST"; url: string; fields?: Record<string, string | string[]> }) {
  if (route.method === "GET") return browser.get(route.url);
  const body = new URLSearchParams({ _csrf: csrf });
  for (const [name, value] of Object.entries(route.fields ?? {})) for (const one of [value].flat()) body.append(name, one);
  return appInstance.inject({
    method: "POST",
    url: route.url,
    headers: { cookie: browser.cookieHeader, "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
    payload: body.toString(),
  });
}

async function expectRefusedEverywhere(browser: InjectBrowser, routes: { method: "GET" | "POST"; url: string; fields?: Record<string, string | string[]> }[]) {
  const csrf = await csrfOf(browser);
  const before = await webState(ctx);
  for (const route of routes) {
    const response = await send(app, browser, csrf, route);
    expect(response.statusCode, `${route.method} ${route.url} ${JSON.stringify(route.fields ?? {})}`).toBe(403);
  }
  expect(await webState(ctx)).toEqual(before);
}

describe("who may reach which page and action (IDOR through ids in addresses)", () => {
  it("organisation admins get 403 for people of other organisations, admins and superadmins, and the superadmin sections", async () => {
    const w = await world();
    const { browser } = await signedInAs(app, ctx, "organisation_admin", w.home.id);
    const targets = [w.awayPerson, w.awayOrganisationAdmin, w.nobody, w.admin, w.superadmin];
    await expectRefusedEverywhere(browser, [...targets.flatMap((target) => userRoutes(target.uid, w, target.email)), ...sectionRoutes(w)]);
  });

  it("super organisation admins get 403 for people outside their organisation's subtree, admins and superadmins, and the superadmin sections", async () => {
    const w = await world();
    const below = await createOrganisation(ctx, { slug: `below-${w.home.slug}`, name: "Below home", parentId: w.home.id });
    const above = await createOrganisation(ctx, { slug: `above-${w.home.slug}`, name: "Above", parentId: null });
    const middle = await createUser(ctx, { role: "super_organisation_admin", organisationId: w.home.id });
    await ctx.db.update(organisations).set({ parentId: above.id }).where(eq(organisations.id, w.home.id));
    const abovePerson = await createUser(ctx, { organisationId: above.id });
    const belowAdmin = await createUser(ctx, { role: "admin", organisationId: below.id });
    const { browser } = await signedInBrowserOf(middle.email);
    const targets = [w.awayPerson, w.awayOrganisationAdmin, w.nobody, w.admin, w.superadmin, abovePerson, belowAdmin];
    await expectRefusedEverywhere(browser, [...targets.flatMap((target) => userRoutes(target.uid, w, target.email)), ...sectionRoutes(w)]);
  });

  it("admins get 403 for superadmins and the superadmin sections", async () => {
    const w = await world();
    const { browser } = await signedInAs(app, ctx, "admin");
    await expectRefusedEverywhere(browser, [...userRoutes(w.superadmin.uid, w, w.superadmin.email), ...sectionRoutes(w)]);
  });

  it("normal users get 403 for every user and section, themselves included", async () => {
    const w = await world();
    const { browser, uid, email } = await signedInAs(app, ctx, "normal", w.home.id);
    const targets = [{ uid, email }, w.awayPerson, w.homeOrganisationAdmin, w.admin];
    const lists = [
      { method: "GET" as const, url: "/users" },
      { method: "GET" as const, url: "/users.csv" },
      { method: "GET" as const, url: "/users/new" },
      { method: "POST" as const, url: "/users/new", fields: { name: "Friend", email: "friend@example.org", role: "admin", organisation: "" } },
    ];
    await expectRefusedEverywhere(browser, [...lists, ...targets.flatMap((target) => userRoutes(target.uid, w, target.email)), ...sectionRoutes(w)]);
  });

  it("an organisation admin without an organisation manages nobody", async () => {
    const w = await world();
    const { browser } = await signedInAs(app, ctx, "organisation_admin");
    await expectRefusedEverywhere(browser, [{ method: "GET", url: "/users" }, ...userRoutes(w.nobody.uid, w, w.nobody.email)]);
  });

  it("nobody reaches an API user through the users pages: they have pages of their own", async () => {
    const w = await world();
    const { browser } = await signedInAs(app, ctx, "admin");
    const csrf = await csrfOf(browser);
    const before = await webState(ctx);
    for (const route of userRoutes(w.apiUser.uid, w, w.apiUser.email)) {
      expect((await send(app, browser, csrf, route)).statusCode, route.url).toBe(404);
    }
    expect(await webState(ctx)).toEqual(before);
  });
});
