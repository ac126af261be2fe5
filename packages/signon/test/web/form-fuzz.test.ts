import { randomBytes } from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import { describe, expect, it } from "vitest";
import { issueApiUserToken } from "../../src/accounts/api-users.js";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { grants } from "../../src/db/schema.js";
import { createApp, createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { webState as state } from "./web-state.js";
import { createTestOrganisation, signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

/** The fields of the application form, on creating and on editing an application. */
const applicationFormFields = [
  "name",
  "redirect_uris",
  "home_uri",
  "push_base_url",
  "permissions",
  "delegatable_permissions",
  "require_pkce",
  "default_permissions",
  "permissions_not_grantable_in_ui",
  "api_only",
  "push_enabled",
];

/** Every form the web interface accepts, with the fields it knows; `{…}` are ids filled in per test. */
const forms: { path: string; fields: string[] }[] = [
  { path: "/sign-in", fields: ["email", "password", "return_to"] },
  { path: "/sign-in/two-step", fields: ["code", "remember", "return_to"] },
  { path: "/sign-in/two-step/passkey", fields: ["response", "remember", "return_to"] },
  { path: "/sign-in/passkey", fields: ["response", "return_to"] },
  { path: "/sign-out", fields: [] },
  { path: "/end-session/confirm", fields: ["confirm", "id_token_hint", "client_id", "post_logout_redirect_uri", "state"] },
  { path: "/account/details", fields: ["name"] },
  { path: "/account/email", fields: ["email", "current"] },
  { path: "/account/email/cancel", fields: [] },
  { path: "/account/email/{token}", fields: [] },
  { path: "/account/password", fields: ["current", "password", "confirmation"] },
  { path: "/account/two-step", fields: ["code", "return_to"] },
  { path: "/account/passkeys", fields: ["name", "response"] },
  { path: "/account/passkeys/{passkey}/remove", fields: ["confirm"] },
  { path: "/account/applications/{application}/give-up", fields: ["confirm"] },
  { path: "/invitations/{token}", fields: ["password", "confirmation"] },
  { path: "/password-reset", fields: ["email"] },
  { path: "/password-reset/{token}", fields: ["password", "confirmation"] },
  { path: "/unlock/{token}", fields: [] },
  { path: "/users/new", fields: ["name", "email", "role", "organisation", "permissions"] },
  { path: "/users/invite-batch", fields: ["role", "organisation", "permissions", "rows", "file"] },
  { path: "/users/{user}", fields: ["name", "email", "role", "organisation", "email_confirmed_out_of_band"] },
  { path: "/users/{user}/cancel-email-change", fields: [] },
  { path: "/users/{user}/suspend", fields: ["reason", "confirm"] },
  { path: "/users/{user}/unsuspend", fields: ["new_password"] },
  { path: "/users/{user}/unlock", fields: [] },
  { path: "/users/{user}/reset-two-step", fields: ["confirm"] },
  { path: "/users/{user}/two-step-requirement", fields: ["required"] },
  { path: "/users/{user}/two-step-exemption", fields: ["reason", "ends_on"] },
  { path: "/users/{user}/two-step-exemption/remove", fields: [] },
  { path: "/users/{user}/permissions", fields: ["permissions", "shown", "shown_held"] },
  { path: "/applications/new", fields: applicationFormFields },
  { path: "/applications/{application}", fields: applicationFormFields },
  { path: "/applications/{application}/rotate-secret", fields: ["confirm"] },
  { path: "/applications/{application}/openid-connect", fields: ["scope_openid", "scope_profile", "scope_email", "id_token_alg", "post_logout_redirect_uris", "backchannel_logout_uri"] },
  { path: "/applications/{application}/retire", fields: ["confirm"] },
  { path: "/applications/{application}/unretire", fields: [] },
  { path: "/applications/{application}/pushes/{push}/retry", fields: [] },
  { path: "/api-users/new", fields: ["name", "email"] },
  { path: "/api-users/{apiUser}/tokens", fields: ["application_id", "permissions", "expires_in_days"] },
  { path: "/api-users/{apiUser}/tokens/{grant}/revoke", fields: ["confirm"] },
  { path: "/api-users/{apiUser}/auto-renewal", fields: ["token_auto_renewal"] },
  { path: "/api-users/{apiUser}/renewed-tokens/{grant}/acknowledge", fields: [] },
  { path: "/organisations/new", fields: ["name", "slug", "content_id", "parent", "closed"] },
  { path: "/organisations/{organisation}", fields: ["name", "slug", "parent", "closed"] },
  { path: "/organisations/{organisation}/two-step", fields: ["required"] },
];

/** Ids that stand in for the real ones in a path: none of them names anything. */
const malformedIds = ["not-an-id", "00000000-0000-4000-8000-00000000000Z", "%C3%A9t%C3%A9", "%E2%80%AE", "1%20OR%201=1", "x".repeat(190), "-1", "0"];

/** A superadmin signed in, and one of each thing the forms act on. */
async function scene() {
  const { browser } = await signedInAs(app, ctx, "superadmin");
  const organisation = await createTestOrganisation(ctx);
  const { application } = await createApp(ctx, { permissions: ["editor"] });
  const person = await createUser(ctx, { organisationId: organisation.id, permissions: { [application.name]: ["signin"] } });
  const apiUser = await createApiUser(ctx, { name: "Robot", email: `robot-${randomBytes(4).toString("hex")}@example.org` });
  await issueApiUserToken(ctx, { user: apiUser, applicationId: application.id, permissions: [], expiresInDays: 30 }, person.uid);
  const [grant] = await ctx.db.select({ id: grants.id }).from(grants);
  const page = await browser.get("/account");
  const csrf = /name="_csrf" value="([^"]*)"/.exec(page.body)?.[1];
  if (csrf === undefined || grant === undefined) throw new Error("scene not set up");
  const ids: Record<string, string> = {
    token: randomBytes(32).toString("hex"),
    user: person.uid,
    application: application.id,
    push: "1",
    apiUser: apiUser.uid,
    grant: grant.id,
    organisation: organisation.id,
    // Nobody's passkey: every post to it is refused.
    passkey: "7d0c4a4e-0b7e-4c55-9a43-2f4f1f0f6c11",
  };
  return { browser, csrf, ids };
}

function fill(path: string, ids: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_whole, name: string) => ids[name] ?? name);
}

async function post(cookie: string, url: string, payload: string | Buffer, contentType = "application/x-www-form-urlencoded"): Promise<LightMyRequestResponse> {
  return app.inject({ method: "POST", url, headers: { cookie, "content-type": contentType, accept: "text/html" }, payload });
}

function encode(fields: [string, string][]): string {
  return fields.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join("&");
}

/** Bodies every form must refuse without changing anything: the CSRF token is right, the rest is not. */
function junkBodies(csrf: string, formFields: string[]): { label: string; payload: string | Buffer; contentType?: string }[] {
  // A form with no fields of its own gets the junk in a second `_csrf`.
  const fields = formFields.length > 0 ? formFields : ["_csrf"];
  const withAll = (value: string): [string, string][] => fields.map((name) => [name, value]);
  return [
    { label: "every field repeated", payload: encode([["_csrf", csrf], ["_csrf", csrf], ...withAll("a"), ...withAll("b")]) },
    { label: "a field it does not know", payload: encode([["_csrf", csrf], ...withAll("a"), ["role", "superadmin"], ["is_api_user", "true"]]) },
    { label: "fields far too long", payload: encode([["_csrf", csrf], ["_csrf_extra", "x".repeat(9000)], ...withAll("x".repeat(9000))]) },
    { label: "a body over the size limit", payload: encode([["_csrf", csrf], ...withAll("y".repeat(20_000))]) },
    { label: "a NUL character", payload: encode([["_csrf", csrf], ...withAll("a\u0000b"), ["nul", "\u0000"]]) },
    { label: "a broken percent-escape", payload: `_csrf=${encodeURIComponent(csrf)}&${fields[0] ?? "x"}=%E0%A4%A&z=%` },
    { label: "bytes that are not UTF-8", payload: Buffer.concat([Buffer.from(`_csrf=${encodeURIComponent(csrf)}&${fields[0] ?? "x"}=`), Buffer.from([0xff, 0xfe, 0xc0])]) },
    { label: "a JSON body", payload: JSON.stringify({ _csrf: csrf, ...Object.fromEntries(withAll("a")) }), contentType: "application/json" },
    { label: "a text body", payload: `_csrf=${csrf}`, contentType: "text/plain" },
    { label: "another charset", payload: encode([["_csrf", csrf], ...withAll("a")]), contentType: "application/x-www-form-urlencoded; charset=iso-8859-1" },
  ];
}

// Each test posts to every form many times over: minutes, not seconds, on a busy machine.
describe("POST to every form of the web interface", { timeout: 60_000 }, () => {
  it("refuses junk bodies with a 4xx page and changes nothing", async () => {
    const { browser, csrf, ids } = await scene();
    const before = await state(ctx);
    for (const form of forms) {
      for (const junk of junkBodies(csrf, form.fields)) {
        const url = fill(form.path, ids);
        const response = await post(browser.cookieHeader, url, junk.payload, junk.contentType);
        expect(response.statusCode, `${url}: ${junk.label}`).toBeGreaterThanOrEqual(400);
        expect(response.statusCode, `${url}: ${junk.label}`).toBeLessThan(500);
      }
    }
    expect(await state(ctx)).toEqual(before);
    // Still signed in: none of it was taken for a sign-out.
    expect((await browser.get("/account")).statusCode).toBe(200);
  });

  it("answers 404 (or 400) for malformed ids in the address and changes nothing", async () => {
    const { browser, csrf, ids } = await scene();
    const before = await state(ctx);
    for (const form of forms.filter((candidate) => candidate.path.includes("{"))) {
      for (const id of malformedIds) {
        const names = [...form.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
        for (const name of names) {
          const url = fill(form.path, { ...ids, [name]: id });
          const response = await post(browser.cookieHeader, url, encode([["_csrf", csrf], ...form.fields.map((field): [string, string] => [field, "a"])]));
          expect(response.statusCode, url).toBeGreaterThanOrEqual(400);
          expect(response.statusCode, url).toBeLessThan(500);
        }
      }
    }
    expect(await state(ctx)).toEqual(before);
  });

  it("never answers 500 to odd but well-formed text in every field", async () => {
    const samples = ["\u202Eevil\u202C", "e\u0301\u0301\u0301", "😀".repeat(40), "\uFEFF", "<script>alert(1)</script>", "javascript:alert(1)", "//evil.example", "/\u20AC", "a\r\nb", " "];
    for (const sample of samples) {
      const { browser, csrf, ids } = await scene();
      for (const form of forms.filter((candidate) => candidate.fields.length > 0)) {
        const url = fill(form.path, ids);
        const response = await post(browser.cookieHeader, url, encode([["_csrf", csrf], ...form.fields.map((field): [string, string] => [field, sample])]));
        expect(response.statusCode, `${url}: ${JSON.stringify(sample)}`).toBeLessThan(500);
        expect(response.body, url).not.toContain("<script>alert(1)</script>");
      }
    }
  });
});

/** The pages whose links carry a query of their own, with the fields they know; `{…}` are ids filled in per test. */
const pagedLinks: { path: string; fields: string[] }[] = [
  { path: "/users/{user}/events", fields: ["before"] },
  { path: "/account/activity", fields: ["before"] },
];

describe("GET the event logs' older-events links", () => {
  it("refuses hostile cursors with 400 and answers an unknown event with an empty page", async () => {
    const { browser, ids } = await scene();
    const hostile = ["", "0", "-1", "1e3", "abc", "1.5", "99999999999999999999", "%00", "1%00", "%E0%A4%A", "1&before=2", "1&page=2", `${"9".repeat(5000)}`];
    for (const link of pagedLinks) {
      const url = fill(link.path, ids);
      for (const value of hostile) {
        const response = await browser.get(`${url}?${link.fields[0] as string}=${value}`);
        expect(response.statusCode, `${url}: ${value}`).toBeGreaterThanOrEqual(400);
        expect(response.statusCode, `${url}: ${value}`).toBeLessThan(500);
      }
      expect((await browser.get(`${url}?before=999999999999999`)).statusCode, url).toBe(200);
    }
  });
});
