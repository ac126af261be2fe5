import { ManualClock, StandInSignon } from "@tessera/signon-client/testing";
import type { FastifyInstance } from "fastify";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { editorialTestDatabase, freePort, listenEditorialApp } from "./support/editorial-app.js";
import { HttpBrowser } from "./support/http-browser.js";

// These tests run the application against the STAND-IN Sign-on of
// @tessera/signon-client/testing; sign-on.e2e.test.ts runs it against the real one.
const database = await editorialTestDatabase();
afterAll(() => database.close());

let signon: StandInSignon;
let app: FastifyInstance;
let appUrl: string;

beforeEach(async () => {
  await database.reset();
  const port = await freePort();
  const client = {
    clientId: "editorial-app",
    clientSecret: "editorial-secret",
    redirectUri: `http://127.0.0.1:${port}/auth/gds/callback`,
  };
  signon = new StandInSignon({ client, clock: new ManualClock() });
  await signon.listen();
  ({ app, url: appUrl } = await listenEditorialApp(
    { ...client, signonUrl: signon.url, database: { url: database.url } },
    port,
  ));
});

afterEach(async () => {
  await app.close();
  await signon.close();
});

let n = 0;
function addUser(permissions: string[] = []) {
  n += 1;
  return signon.addUser({
    uid: `5f0c1d2e-0000-4000-8000-${String(n).padStart(12, "0")}`,
    name: `Editor ${n} <script>`,
    email: `editor${n}@example.org`,
    permissions: ["signin", ...permissions],
    organisation_slug: "cabinet-office",
    organisation_content_id: "96ae61d6-c2a1-48cb-8e67-da9d105ae381",
    disabled: false,
  });
}

async function signedIn(uid: string) {
  signon.signedInUid = uid;
  const browser = new HttpBrowser();
  const home = await browser.get(`${appUrl}/`);
  return { browser, home };
}

function pushHeaders() {
  const pusher = addUser(["user_update_permission"]);
  return { authorization: `Bearer ${signon.issueApiToken(pusher.uid)}`, "content-type": "application/json" };
}

describe("GET /", () => {
  it("sends a signed-out visitor through Sign-on and back", async () => {
    const user = addUser();

    const { browser, home } = await signedIn(user.uid);

    expect(home.response.status).toBe(200);
    expect(browser.visited.map((url) => new URL(url).pathname)).toEqual([
      "/",
      "/auth/gds",
      "/oauth/authorize",
      "/auth/gds/callback",
      "/",
    ]);
  });

  it("shows who you are and your permissions, escaped", async () => {
    const user = addUser(["editor"]);

    const { home } = await signedIn(user.uid);

    expect(home.body).toContain(`<dd id="name">${user.name.replace("<", "&#60;").replace(">", "&#62;")}</dd>`);
    expect(home.body).not.toContain("<script>");
    expect(home.body).toContain(`<dd id="email">${user.email}</dd>`);
    expect(home.body).toContain(`<dd id="organisation">cabinet-office</dd>`);
    expect(home.body).toContain(`<ul id="permissions"><li><code>editor</code></li><li><code>signin</code></li></ul>`);
  });
});

describe("GET /admin", () => {
  it("answers 403 to a user without the admin permission", async () => {
    const { browser } = await signedIn(addUser().uid);

    const admin = await browser.get(`${appUrl}/admin`);

    expect(admin.response.status).toBe(403);
    expect(admin.body).toContain("<h1>You do not have permission to see this page</h1>");
    expect(admin.body).toContain("This page needs the <code>admin</code> permission");
    expect(admin.body).toContain('<a href="/">Back to the home page</a>');
    expect(admin.body).toContain(`<a href="${signon.url}">Your Sign-on dashboard</a>`);
    expect(admin.body).toContain('<a href="/auth/gds/sign_out">Sign out</a>');
  });

  it("lists the users Sign-on told the application about to an admin", async () => {
    const admin = addUser(["admin"]);
    const { browser } = await signedIn(admin.uid);

    const page = await browser.get(`${appUrl}/admin`);

    expect(page.response.status).toBe(200);
    expect(page.body).toContain(`<td>${admin.email}</td><td><code>admin</code> <code>signin</code></td><td>active</td>`);
  });
});

describe("push receivers", () => {
  it("PUT /auth/gds/api/users/:uid takes the admin permission away at once", async () => {
    const user = addUser(["admin"]);
    const { browser } = await signedIn(user.uid);
    expect((await browser.get(`${appUrl}/admin`)).response.status).toBe(200);

    const push = await fetch(`${appUrl}/auth/gds/api/users/${user.uid}`, {
      method: "PUT",
      headers: pushHeaders(),
      body: JSON.stringify({ user: { ...user, permissions: ["signin"] } }),
    });

    expect(push.status).toBe(200);
    expect((await browser.get(`${appUrl}/admin`)).response.status).toBe(403);
  });

  it("POST /auth/gds/api/users/:uid/reauth sends the user to sign in again", async () => {
    const user = addUser();
    const { browser } = await signedIn(user.uid);

    const push = await fetch(`${appUrl}/auth/gds/api/users/${user.uid}/reauth`, {
      method: "POST",
      headers: pushHeaders(),
      body: "{}",
    });
    signon.signedInUid = null;
    const next = await browser.get(`${appUrl}/`);

    expect(push.status).toBe(200);
    expect(new URL(next.url).pathname).toBe("/oauth/authorize");
    expect(next.response.status).toBe(403);
  });

  it("answers 401 to a push without a token", async () => {
    const user = addUser();

    const push = await fetch(`${appUrl}/auth/gds/api/users/${user.uid}/reauth`, { method: "POST" });

    expect(push.status).toBe(401);
    expect(push.headers.get("www-authenticate")).toBe("Bearer");
  });
});

describe("GET /api/me", () => {
  it("answers with the bearer token's user", async () => {
    const user = addUser(["editor"]);

    const response = await fetch(`${appUrl}/api/me`, {
      headers: { authorization: `Bearer ${signon.issueApiToken(user.uid)}` },
    });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      user: {
        uid: user.uid,
        name: user.name,
        email: user.email,
        permissions: ["editor", "signin"],
        organisation_slug: "cabinet-office",
        organisation_content_id: "96ae61d6-c2a1-48cb-8e67-da9d105ae381",
      },
    });
  });

  it("answers 401 invalid_token to a token Sign-on rejects", async () => {
    const response = await fetch(`${appUrl}/api/me`, { headers: { authorization: "Bearer nope" } });

    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: "invalid_token",
      error_description: "The bearer token is invalid, expired or revoked.",
    });
  });
});

describe("GET /auth/gds/sign_out", () => {
  it("ends the session and sends the browser to Sign-on's sign-out page", async () => {
    const { browser } = await signedIn(addUser().uid);

    const out = await browser.get(`${appUrl}/auth/gds/sign_out`);

    expect(out.url).toBe(`${signon.url}/`);
    expect(browser.cookie(appUrl, "editorial_session")).toBeUndefined();
  });
});

describe("GET /assets/editorial.css", () => {
  it("serves the stylesheet every page links to, without a session", async () => {
    const { browser } = await signedIn(addUser().uid);
    expect((await browser.get(`${appUrl}/`)).body).toContain('<link rel="stylesheet" href="/assets/editorial.css">');

    const stylesheet = await fetch(`${appUrl}/assets/editorial.css`);

    expect(stylesheet.status).toBe(200);
    expect(stylesheet.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await stylesheet.text()).toContain("header.site");
  });
});

describe("an unknown address", () => {
  it("answers a browser with a 404 page of the application, with a way home", async () => {
    const response = await fetch(`${appUrl}/no/such/page`, { headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" } });

    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = await response.text();
    expect(body).toContain("<title>Page not found · Editorial</title>");
    expect(body).toContain("<h1>Page not found</h1>");
    expect(body).toContain("<p>There is no page at this address. It may have been mistyped, or the page has moved.</p>");
    expect(body).toContain('<a href="/">Back to the home page</a>');
    expect(body).not.toContain("Route GET:");
  });

  it("answers an API caller, and a browser's POST, with JSON", async () => {
    for (const request of [
      fetch(`${appUrl}/api/no-such-thing`, { headers: { accept: "application/json" } }),
      fetch(`${appUrl}/no/such/page`),
      fetch(`${appUrl}/no/such/page`, { method: "POST", headers: { accept: "text/html", "content-type": "application/json" }, body: "{}" }),
    ]) {
      const response = await request;
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await response.json()).toEqual({ error: "not_found", error_description: "Nothing is at this address." });
    }
  });
});
