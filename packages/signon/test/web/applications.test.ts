import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { auditEvents, applications, pushDeliveries, sessions, userPermissions } from "../../src/db/schema.js";
import { sha256Hex } from "../../src/security/random.js";
import { signedInBrowser, type InjectBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { authorizeUrl, postForm } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();
const db = database.db;

async function browserFor(role: "superadmin" | "admin" | "organisation_admin" | "normal"): Promise<InjectBrowser> {
  const organisation = role === "organisation_admin" ? await createOrganisation(signon.ctx, { slug: `org-${role.replace("_", "-")}-${Date.now()}`, name: "Org" }) : undefined;
  const user = await createUser(signon.ctx, { role, organisationId: organisation?.id });
  return signedInBrowser(signon.app, user.email, defaultPassword);
}

const superadmin = () => browserFor("superadmin");

const validForm = {
  name: "Publisher",
  redirect_uris: "https://publisher.example/auth/callback\r\nhttps://publisher.example/other",
  home_uri: "https://publisher.example/",
  push_base_url: "",
  permissions: "editor, admin",
  delegatable_permissions: "signin",
  require_pkce: "yes",
};

/** Whether a client id and secret authenticate (the introspection endpoint answers 200 only to an authenticated client). */
async function clientAuthenticates(clientId: string, clientSecret: string): Promise<boolean> {
  const response = await postForm(signon.app, "/oauth/introspect", { token: "x".repeat(64), client_id: clientId, client_secret: clientSecret });
  return response.statusCode === 200;
}

async function auditActions(action: string) {
  return db.select().from(auditEvents).where(eq(auditEvents.action, action));
}

function editFields(overrides: Record<string, string> = {}) {
  return {
    redirect_uris: "https://app.example/auth/callback",
    home_uri: "",
    push_base_url: "",
    permissions: "admin",
    delegatable_permissions: "",
    ...overrides,
  };
}

describe("GET /applications", () => {
  it("lists every application with its client id, home URI, retired tag and pending and failed pushes", async () => {
    const live = await createApp(signon.ctx, { name: "Live app", homeUri: "https://live.example/" });
    const retired = await createApp(signon.ctx, { name: "Old app" });
    await db.update(applications).set({ retired: true }).where(eq(applications.id, retired.application.id));
    await createUser(signon.ctx, { permissions: { "Live app": ["signin"] } });
    const failing = await createUser(signon.ctx, { permissions: { "Live app": ["signin"] } });
    await db.update(pushDeliveries).set({ status: "failed" }).where(eq(pushDeliveries.userUid, failing.uid));

    const response = await (await superadmin()).get("/applications");
    expect(response.statusCode).toBe(200);
    const liveRow = /<tr>\s*<th scope="row"><a href="\/applications\/[^"]+">Live app<\/a><\/th>[\s\S]*?<\/tr>/.exec(response.body)?.[0] ?? "";
    expect(liveRow).toContain(live.clientId);
    expect(liveRow).toContain("https://live.example/");
    expect(liveRow).toMatch(/>1<span class="visually-hidden"> pending/);
    expect(liveRow).toMatch(/>1<span class="visually-hidden"> failed/);
    expect(response.body).toMatch(/Old app<\/a> <span class="tag suspended">Retired<\/span>/);
    expect(response.body).not.toContain(live.clientSecret);
  });

  it("sends a browser that is not signed in to the sign-in page", async () => {
    const response = await signon.app.inject({ method: "GET", url: "/applications" });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/sign-in?return_to=%2Fapplications");
  });
});

describe("POST /applications/new", () => {
  it("registers the application and redirects to its secret, shown once (a reload shows it no more), storing only its digest", async () => {
    const browser = await superadmin();
    expect((await browser.get("/applications/new")).statusCode).toBe(200);
    const response = await browser.submit("/applications/new", "/applications/new", validForm);
    expect(response.statusCode).toBe(303);
    const [row] = await db.select().from(applications).where(eq(applications.name, "Publisher"));
    expect(response.headers.location).toBe(`/applications/${row?.id}/secret`);
    expect(response.body).toBe("");
    const waiting = JSON.stringify(await db.select({ flash: sessions.flash }).from(sessions));

    const shown = await browser.get(response.headers.location as string);
    expect(shown.statusCode).toBe(200);
    expect(shown.headers["cache-control"]).toBe("no-store");
    expect(shown.body).toContain("Publisher is registered. Give it its client id and this secret.");
    const secret = /<p class="secret"[^>]*>([0-9a-f]{64})<\/p>/.exec(shown.body)?.[1] as string;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(shown.body).toContain(row?.clientId);
    // Kept only sealed in the session until shown, then gone.
    expect(waiting).toContain('"sealed":"v1.');
    expect(waiting).not.toContain(secret);
    expect((await db.select({ flash: sessions.flash }).from(sessions)).filter((one) => one.flash?.secret !== undefined)).toEqual([]);

    const again = await browser.get(response.headers.location as string);
    expect(again.statusCode).toBe(200);
    expect(again.body).not.toContain(secret);
    expect(again.body).not.toContain('class="secret"');
    expect(again.body).toContain("cannot be shown again");

    expect(row).toMatchObject({
      redirectUris: ["https://publisher.example/auth/callback", "https://publisher.example/other"],
      homeUri: "https://publisher.example/",
      pushBaseUrl: null,
      supportedPermissions: ["admin", "editor", "signin"],
      delegatablePermissions: ["signin"],
      requirePkce: true,
      retired: false,
      clientSecretHash: sha256Hex(secret),
    });
    expect(await clientAuthenticates(row?.clientId as string, secret)).toBe(true);
    expect((await browser.get(`/applications/${row?.id}`)).body).not.toContain(secret);
    expect(await auditActions("application_created")).toHaveLength(1);
  });

  it("answers 400 with a message next to each field that is not right, and registers nothing", async () => {
    const browser = await superadmin();
    await createApp(signon.ctx, { name: "Taken" });
    const response = await browser.submit("/applications/new", "/applications/new", {
      ...validForm,
      name: "   ",
      redirect_uris: "http://publisher.example/callback",
      home_uri: "not a uri",
      permissions: "Editor",
      delegatable_permissions: "publish",
    });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('<div class="error" role="alert"');
    expect(response.body).toMatch(/<p class="error-message" id="name-error">Enter a name of 1 to 200 characters<\/p>/);
    expect(response.body).toMatch(/id="redirect_uris-error">Redirect URI http:\/\/publisher.example\/callback must use https/);
    expect(response.body).toMatch(/id="home_uri-error">The home URI is not an absolute URI/);
    expect(response.body).toMatch(/id="permissions-error">Permission names are lower-case/);
    expect(response.body).toMatch(/id="delegatable_permissions-error">Delegatable permissions must be supported ones: publish is not/);
    expect(response.body).toContain('<a href="#redirect_uris">');

    const duplicate = await browser.submit("/applications/new", "/applications/new", { ...validForm, name: "Taken" });
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.body).toContain("An application named Taken already exists");
    expect(await db.select().from(applications)).toHaveLength(1);
  });

  it("answers 400, not 500, to a missing or repeated field", async () => {
    const browser = await superadmin();
    const { name: _name, ...withoutName } = validForm;
    expect((await browser.submit("/applications/new", "/applications/new", withoutName)).statusCode).toBe(400);
    const page = await browser.get("/applications/new");
    const csrf = /name="_csrf" value="([^"]*)"/.exec(page.body)?.[1] as string;
    const repeated = await signon.app.inject({
      method: "POST",
      url: "/applications/new",
      headers: { cookie: browser.cookieHeader, "content-type": "application/x-www-form-urlencoded" },
      payload: `${new URLSearchParams({ _csrf: csrf, ...validForm }).toString()}&name=Second`,
    });
    expect(repeated.statusCode).toBe(400);
    expect(await db.select().from(applications)).toHaveLength(0);
  });

  it("refuses a post without a valid CSRF token", async () => {
    const browser = await superadmin();
    await browser.get("/applications/new");
    expect((await browser.postForm("/applications/new", validForm)).statusCode).toBe(403);
    expect((await browser.postForm("/applications/new", { ...validForm, _csrf: "forged" })).statusCode).toBe(403);
    expect(await db.select().from(applications)).toHaveLength(0);
  });
});

describe("GET and POST /applications/:id", () => {
  it("shows the settings and saves changed ones, with an audit event", async () => {
    const client = await createApp(signon.ctx, { name: "Edited", permissions: ["admin"] });
    const browser = await superadmin();
    const page = await browser.get(`/applications/${client.application.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(client.redirectUri);
    expect(page.body).not.toContain(client.clientSecret);

    const response = await browser.submit(
      `/applications/${client.application.id}`,
      `/applications/${client.application.id}`,
      editFields({
        redirect_uris: "https://edited.example/callback",
        home_uri: "https://edited.example/",
        push_base_url: "https://edited.example/auth/gds/api",
        permissions: "admin\nreviewer",
        delegatable_permissions: "signin, reviewer",
      }),
    );
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(`/applications/${client.application.id}`);
    expect((await browser.follow(response)).body).toContain("Edited is saved.");
    const [row] = await db.select().from(applications).where(eq(applications.id, client.application.id));
    expect(row).toMatchObject({
      redirectUris: ["https://edited.example/callback"],
      homeUri: "https://edited.example/",
      pushBaseUrl: "https://edited.example/auth/gds/api",
      supportedPermissions: ["admin", "reviewer", "signin"],
      delegatablePermissions: ["reviewer", "signin"],
      requirePkce: false,
      clientSecretHash: client.application.clientSecretHash,
    });
    const [event] = await auditActions("application_updated");
    expect(event?.details).toEqual({ changed: ["delegatablePermissions", "homeUri", "pushBaseUrl", "redirectUris", "supportedPermissions"] });
  });

  it("revokes a dropped permission from its holders through the push outbox", async () => {
    const client = await createApp(signon.ctx, { name: "Shrinking", permissions: ["admin", "editor"] });
    const holder = await createUser(signon.ctx, { permissions: { Shrinking: ["signin", "admin", "editor"] } });
    const other = await createUser(signon.ctx, { permissions: { Shrinking: ["signin"] } });
    await db.update(pushDeliveries).set({ status: "delivered" });
    const browser = await superadmin();
    const response = await browser.submit(`/applications/${client.application.id}`, `/applications/${client.application.id}`, editFields({ redirect_uris: client.redirectUri, permissions: "editor" }));
    expect(response.statusCode).toBe(303);
    expect((await browser.follow(response)).body).toContain("1 user(s) lost permissions it no longer supports");

    const held = await db.select({ permission: userPermissions.permission }).from(userPermissions).where(eq(userPermissions.userUid, holder.uid));
    expect(held.map((row) => row.permission).sort()).toEqual(["editor", "signin"]);
    const pending = await db.select().from(pushDeliveries).where(eq(pushDeliveries.status, "pending"));
    expect(pending.map((row) => [row.userUid, row.applicationId, row.kind])).toEqual([[holder.uid, client.application.id, "update"]]);
    const [revoked] = await auditActions("permissions_revoked");
    expect(revoked).toMatchObject({ subjectUid: holder.uid, applicationId: client.application.id, details: { permissions: ["admin"], reason: "no longer supported" } });
    expect(other.uid).not.toBe(holder.uid);
  });

  it("answers 400 with messages next to the fields and changes nothing", async () => {
    const client = await createApp(signon.ctx, { name: "Kept" });
    const browser = await superadmin();
    const response = await browser.submit(`/applications/${client.application.id}`, `/applications/${client.application.id}`, editFields({ redirect_uris: "", push_base_url: "ftp://x.example/" }));
    expect(response.statusCode).toBe(400);
    expect(response.body).toMatch(/id="redirect_uris-error">Enter at least one redirect URI/);
    expect(response.body).toMatch(/id="push_base_url-error">The push base URL must use https/);
    const [row] = await db.select().from(applications).where(eq(applications.id, client.application.id));
    expect(row).toEqual(client.application);
    expect(await auditActions("application_updated")).toEqual([]);
  });

  it("answers 404 for an unknown or malformed id", async () => {
    const browser = await superadmin();
    expect((await browser.get("/applications/4a1c9f7e-1111-4a4a-8b8b-000000000000")).statusCode).toBe(404);
    expect((await browser.get("/applications/not-an-id")).statusCode).toBe(404);
    expect((await browser.get("/applications/4a1c9f7e-1111-4a4a-8b8b-000000000000/pushes")).statusCode).toBe(404);
    const post = await browser.submit("/applications", "/applications/4a1c9f7e-1111-4a4a-8b8b-000000000000", editFields());
    expect(post.statusCode).toBe(404);
    expect(post.body).toContain("There is no such application");
  });
});

describe("POST /applications/:id/rotate-secret (confirmed)", () => {
  it("redirects to the new secret, shown once; the old one stops working at once", async () => {
    const client = await createApp(signon.ctx, { name: "Rotated" });
    expect(await clientAuthenticates(client.clientId, client.clientSecret)).toBe(true);
    const browser = await superadmin();
    const response = await browser.submit(`/applications/${client.application.id}`, `/applications/${client.application.id}/rotate-secret`, { confirm: "yes" });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(`/applications/${client.application.id}/secret`);
    const shown = await browser.get(response.headers.location as string);
    expect(shown.body).toContain("The old secret of Rotated no longer works. Give it this one.");
    const secret = /<p class="secret"[^>]*>([0-9a-f]{64})<\/p>/.exec(shown.body)?.[1] as string;
    expect((await browser.get(response.headers.location as string)).body).not.toContain(secret);
    expect(secret).not.toBe(client.clientSecret);
    expect(await clientAuthenticates(client.clientId, client.clientSecret)).toBe(false);
    expect(await clientAuthenticates(client.clientId, secret)).toBe(true);
    const [row] = await db.select().from(applications).where(eq(applications.id, client.application.id));
    expect(row?.clientSecretHash).toBe(sha256Hex(secret));
    expect(await auditActions("application_secret_rotated")).toHaveLength(1);
  });
});

describe("POST /applications/:id/retire (confirmed)", () => {
  it("retires the application: no sign-in, no client authentication, no secret rotation", async () => {
    const client = await createApp(signon.ctx, { name: "Retiring" });
    const browser = await superadmin();
    const response = await browser.submit(`/applications/${client.application.id}`, `/applications/${client.application.id}/retire`, { confirm: "yes" });
    expect(response.statusCode).toBe(303);
    const page = await browser.follow(response);
    expect(page.body).toContain("Retiring is retired");
    expect(page.body).not.toContain("/rotate-secret");
    const [row] = await db.select().from(applications).where(eq(applications.id, client.application.id));
    expect(row?.retired).toBe(true);
    expect(await auditActions("application_retired")).toHaveLength(1);
    expect(await clientAuthenticates(client.clientId, client.clientSecret)).toBe(false);
    const authorize = await signon.app.inject({
      method: "GET",
      url: authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s" }),
    });
    expect(authorize.statusCode).toBe(400);

    const rotate = await browser.submit(`/applications/${client.application.id}/pushes`, `/applications/${client.application.id}/rotate-secret`, { confirm: "yes" });
    expect(rotate.statusCode).toBe(303);
    expect((await db.select().from(applications).where(eq(applications.id, client.application.id)))[0]?.clientSecretHash).toBe(client.application.clientSecretHash);
  });
});

describe("POST /applications/:id/unretire", () => {
  it("brings a retired application back: the dashboard offers it, authorize and its client secret work again, audited", async () => {
    const client = await createApp(signon.ctx, { name: "Returning", homeUri: "https://returning.example/" });
    const person = await createUser(signon.ctx, { permissions: { Returning: ["signin"] } });
    const own = await signedInBrowser(signon.app, person.email, defaultPassword);
    const browser = await superadmin();
    const page = `/applications/${client.application.id}`;
    await browser.submit(page, `${page}/retire`, { confirm: "yes" });
    expect((await own.get("/")).body).not.toContain("Returning");

    const retired = await browser.get(page);
    expect(retired.body).toContain("It can be brought back (below)");
    expect(retired.body).toContain(`<form method="post" action="${page}/unretire">`);
    expect(retired.body).toContain("Bring back Returning</button>");
    expect(retired.body).not.toContain(`${page}/retire"`);

    const response = await browser.submit(page, `${page}/unretire`);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(page);
    const back = await browser.get(page);
    expect(back.body).toContain("Returning is back in use: it signs people in again, and its client secret and unexpired tokens work again.");
    expect(back.body).toContain(`action="${page}/retire"`);
    expect(back.body).not.toContain("/unretire");
    const [row] = await db.select().from(applications).where(eq(applications.id, client.application.id));
    expect(row?.retired).toBe(false);
    const audited = (await auditActions("application_unretired")).filter((event) => event.applicationId === client.application.id);
    expect(audited.map((event) => ({ details: event.details, ip: event.ip }))).toEqual([{ details: { name: "Returning" }, ip: "127.0.0.1" }]);

    expect(await clientAuthenticates(client.clientId, client.clientSecret)).toBe(true);
    expect((await own.get("/")).body).toContain('<a href="https://returning.example/">Returning</a>');
    const authorize = await own.get(authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s" }));
    expect(authorize.statusCode).toBe(302);
    expect(new URL(authorize.headers.location as string).searchParams.get("state")).toBe("s");
    expect(authorize.headers.location).toMatch(/^https:\/\/app\d+\.example\/auth\/callback\?code=/);
  });

  it("leaves an application in use alone, with a message; 404 for an unknown one; 403 without the CSRF token", async () => {
    const client = await createApp(signon.ctx, { name: "Never retired" });
    const browser = await superadmin();
    const page = `/applications/${client.application.id}`;
    const response = await browser.submit(page, `${page}/unretire`);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(page);
    expect((await browser.get(page)).body).toContain("Never retired is not retired.");
    expect((await auditActions("application_unretired")).filter((event) => event.applicationId === client.application.id)).toEqual([]);

    expect((await browser.submit(page, "/applications/4a1c9f7e-1111-4a4a-8b8b-000000000000/unretire")).statusCode).toBe(404);
    await db.update(applications).set({ retired: true }).where(eq(applications.id, client.application.id));
    expect((await browser.postForm(`${page}/unretire`, {})).statusCode).toBe(403);
    expect((await db.select().from(applications).where(eq(applications.id, client.application.id)))[0]?.retired).toBe(true);
  });
});

describe("GET /applications/:id/pushes and POST …/retry", () => {
  it("shows each push with its user, kind, status, attempts, last error and next attempt, and retries a failed one", async () => {
    const client = await createApp(signon.ctx, { name: "Receiver" });
    const failedUser = await createUser(signon.ctx, { email: "failed@example.org", permissions: { Receiver: ["signin"] } });
    await createUser(signon.ctx, { email: "waiting@example.org", permissions: { Receiver: ["signin"] } });
    await db
      .update(pushDeliveries)
      .set({ status: "failed", attempts: 7, lastError: "HTTP 410 from the receiver" })
      .where(eq(pushDeliveries.userUid, failedUser.uid));
    const [failed] = await db.select().from(pushDeliveries).where(eq(pushDeliveries.userUid, failedUser.uid));

    const browser = await superadmin();
    const page = await browser.get(`/applications/${client.application.id}/pushes`);
    expect(page.statusCode).toBe(200);
    const failedRow = /<tr>\s*<th scope="row">failed@example.org<\/th>[\s\S]*?<\/tr>/.exec(page.body)?.[0] ?? "";
    expect(failedRow).toContain("Failed");
    expect(failedRow).toContain("<td>7</td>");
    expect(failedRow).toContain("HTTP 410 from the receiver");
    expect(failedRow).toContain(`/pushes/${failed?.id}/retry`);
    const waitingRow = /<tr>\s*<th scope="row">waiting@example.org<\/th>[\s\S]*?<\/tr>/.exec(page.body)?.[0] ?? "";
    expect(waitingRow).toContain("Pending");
    expect(waitingRow).toContain("<time datetime=");
    expect(waitingRow).not.toContain("/retry");

    const retry = await browser.submit(`/applications/${client.application.id}/pushes`, `/applications/${client.application.id}/pushes/${failed?.id}/retry`);
    expect(retry.statusCode).toBe(303);
    expect((await browser.follow(retry)).body).toContain("The push is due again now.");
    const [after] = await db.select().from(pushDeliveries).where(eq(pushDeliveries.id, failed?.id as number));
    expect(after).toMatchObject({ status: "pending", attempts: 0 });
    const [event] = await auditActions("push_retried");
    expect(event).toMatchObject({ subjectUid: failedUser.uid, applicationId: client.application.id });

    const again = await browser.submit(`/applications/${client.application.id}/pushes`, `/applications/${client.application.id}/pushes/${failed?.id}/retry`);
    expect((await browser.follow(again)).body).toContain("That push has not failed");
    expect(await auditActions("push_retried")).toHaveLength(1);
  });

  it("pages the pushes 200 at a time by keyset, failed first, then pending, then delivered, newest first within each", async () => {
    const client = await createApp(signon.ctx, { name: "Crowded" });
    await db.execute(sql`
      with people as (
        insert into signon.users (uid, name, email, created_at, updated_at)
        select gen_random_uuid(), 'Pushed ' || n, 'pushed' || n || '@example.org', now(), now() from generate_series(1, 205) n
        returning uid, email)
      insert into signon.push_deliveries (user_uid, application_id, kind, seq, status, pending_since, next_attempt_at, created_at, updated_at)
      select uid, ${client.application.id}::uuid, 'update', nextval('signon.push_sequence'),
             (array['failed', 'pending', 'delivered'])[1 + substring(email from '[0-9]+')::int % 3], now(), now(), now(),
             now() - (substring(email from '[0-9]+')::int % 7) * interval '1 minute'
        from people`);
    const browser = await superadmin();
    const base = `/applications/${client.application.id}/pushes`;
    const listed = (body: string) =>
      [...body.matchAll(/<th scope="row">([^<]+)<\/th>\s*<td>[^<]*<\/td>\s*<td><span class="tag[^"]*">(\w+)<\/span>/g)].map((match) => ({ email: match[1], status: match[2] }));
    const first = await browser.get(base);
    expect(listed(first.body)).toHaveLength(200);
    const next = /<a href="([^"]*)" rel="next">/.exec(first.body)?.[1];
    expect(next).toMatch(/\?after=\d+$/);
    const second = await browser.get(next as string);
    expect(listed(second.body)).toHaveLength(5);
    expect(second.body).not.toContain('rel="next"');
    const all = [...listed(first.body), ...listed(second.body)];
    expect(new Set(all.map((push) => push.email)).size).toBe(205);
    const rank = { Failed: 0, Pending: 1, Delivered: 2 } as Record<string, number>;
    const ranks = all.map((push) => rank[push.status as string] as number);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    for (const query of ["after=0", "after=abc", "page=2"]) expect((await browser.get(`${base}?${query}`)).statusCode, query).toBe(400);
  });

  it("answers 404 for a push of another application or an unknown push", async () => {
    const client = await createApp(signon.ctx, { name: "Mine" });
    await createApp(signon.ctx, { name: "Theirs" });
    const user = await createUser(signon.ctx, { permissions: { Theirs: ["signin"] } });
    await db.update(pushDeliveries).set({ status: "failed" }).where(eq(pushDeliveries.userUid, user.uid));
    const [theirs] = await db.select().from(pushDeliveries).where(eq(pushDeliveries.userUid, user.uid));
    const browser = await superadmin();
    const base = `/applications/${client.application.id}/pushes`;
    expect((await browser.submit(base, `${base}/${theirs?.id}/retry`)).statusCode).toBe(404);
    expect((await browser.submit(base, `${base}/999999/retry`)).statusCode).toBe(404);
    expect((await browser.submit(base, `${base}/abc/retry`)).statusCode).toBe(404);
    expect((await db.select().from(pushDeliveries).where(eq(pushDeliveries.id, theirs?.id as number)))[0]?.status).toBe("failed");
  });
});

describe("who may manage applications", () => {
  for (const role of ["admin", "organisation_admin", "normal"] as const) {
    it(`gives ${role} 403 on every page and form of the section, and changes nothing`, async () => {
      const client = await createApp(signon.ctx, { name: `Guarded ${role}` });
      const user = await createUser(signon.ctx, { permissions: { [`Guarded ${role}`]: ["signin"] } });
      await db.update(pushDeliveries).set({ status: "failed" }).where(eq(pushDeliveries.userUid, user.uid));
      const [push] = await db.select().from(pushDeliveries).where(eq(pushDeliveries.userUid, user.uid));
      const before = await db.select().from(applications);
      const browser = await browserFor(role);
      const eventsBefore = (await db.select().from(auditEvents)).length;
      const id = client.application.id;

      for (const url of ["/applications", "/applications/new", `/applications/${id}`, `/applications/${id}/pushes`, `/applications/${id}/rotate-secret`, `/applications/${id}/retire`, `/applications/${id}/secret`]) {
        const response = await browser.get(url);
        expect(response.statusCode, url).toBe(403);
        expect(response.body).toContain("You cannot do that");
      }
      const posts: [string, Record<string, string>][] = [
        ["/applications/new", validForm],
        [`/applications/${id}`, editFields({ redirect_uris: "https://evil.example/cb" })],
        [`/applications/${id}/rotate-secret`, { confirm: "yes" }],
        [`/applications/${id}/retire`, { confirm: "yes" }],
        [`/applications/${id}/unretire`, {}],
        [`/applications/${id}/pushes/${push?.id}/retry`, {}],
      ];
      for (const [action, fields] of posts) {
        const response = await browser.submit("/", action, fields);
        expect(response.statusCode, action).toBe(403);
        expect(response.body).toContain("You cannot do that");
      }
      expect(await db.select().from(applications)).toEqual(before);
      const [pushAfter] = await db.select().from(pushDeliveries).where(and(eq(pushDeliveries.userUid, user.uid), eq(pushDeliveries.applicationId, id)));
      expect(pushAfter?.status).toBe("failed");
      expect((await db.select().from(auditEvents)).length).toBe(eventsBefore);
    });
  }
});
