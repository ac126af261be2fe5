import { describe, expect, it } from "vitest";
import { Browser, location } from "./support/browser.js";
import { createUser, useHarness } from "./support/client-app.js";

const h = useHarness();

/** Sign-on's push credential: an API user with `signin` and `user_update_permission` (DECISIONS S13). */
function pushToken(): string {
  const pusher = h.signon.addUser(createUser({ name: "Sign-on push", permissions: ["user_update_permission"] }));
  return h.signon.issueApiToken(pusher.uid);
}

function putUser(uid: string, body: unknown, token: string | null) {
  return h.app.inject({
    method: "PUT",
    url: `/auth/gds/api/users/${uid}`,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    payload: body as object,
  });
}

function reauth(uid: string, token: string | null) {
  return h.app.inject({
    method: "POST",
    url: `/auth/gds/api/users/${uid}/reauth`,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    payload: {},
  });
}

describe("PUT /auth/gds/api/users/:uid", () => {
  it("answers 401 without a bearer token", async () => {
    const user = createUser();

    const response = await putUser(user.uid, { user }, null);

    expect(response.statusCode).toBe(401);
    expect(response.headers["www-authenticate"]).toBe("Bearer");
    expect(response.json()).toEqual({
      error: "missing_token",
      error_description: "This request needs an Authorization: Bearer token.",
    });
  });

  it("answers 400 with invalid_request for a Bearer header without a well-formed token", async () => {
    const user = createUser();

    for (const authorization of ["Bearer", "Bearer ", "Bearer two words", "bearer t\u00f6ken", "Bearer a,b"]) {
      const response = await h.app.inject({ method: "PUT", url: `/auth/gds/api/users/${user.uid}`, headers: { authorization }, payload: { user } });

      expect(response.statusCode, authorization).toBe(400);
      expect(response.headers["www-authenticate"]).toBe('Bearer error="invalid_request"');
      expect(response.json()).toEqual({
        error: "invalid_request",
        error_description: "The Authorization header names the Bearer scheme but holds no well-formed token (RFC 6750 section 2.1).",
      });
    }
    // Another scheme is no Bearer token at all: the usual 401 that asks for one.
    const basic = await h.app.inject({ method: "PUT", url: `/auth/gds/api/users/${user.uid}`, headers: { authorization: "Basic dXNlcjpwYXNz" }, payload: { user } });
    expect(basic.statusCode).toBe(401);
    expect(basic.json()).toMatchObject({ error: "missing_token" });
    expect(await h.users.findByUid(user.uid)).toBeNull();
  });

  it("answers 401 with invalid_token for a token Sign-on does not know", async () => {
    const user = createUser();

    const response = await putUser(user.uid, { user }, "f".repeat(64));

    expect(response.statusCode).toBe(401);
    expect(response.headers["www-authenticate"]).toBe('Bearer error="invalid_token"');
    expect(response.json()).toEqual({
      error: "invalid_token",
      error_description: "The bearer token is invalid, expired or revoked.",
    });
  });

  it("answers 403 with insufficient_scope when the token's user lacks user_update_permission", async () => {
    const caller = h.signon.addUser(createUser());
    const user = createUser();

    const response = await putUser(user.uid, { user }, h.signon.issueApiToken(caller.uid));

    expect(response.statusCode).toBe(403);
    expect(response.headers["www-authenticate"]).toBe('Bearer error="insufficient_scope"');
    expect(response.json()).toEqual({
      error: "insufficient_scope",
      error_description: "The bearer token's user lacks: user_update_permission.",
    });
    expect(await h.users.findByUid(user.uid)).toBeNull();
  });

  it("creates the user, then replaces the user's details and permissions", async () => {
    const token = pushToken();
    const user = createUser({ permissions: ["admin"] });

    const created = await putUser(user.uid, { user }, token);
    expect(created.statusCode).toBe(200);
    expect(created.json()).toEqual({});
    expect(await h.users.findByUid(user.uid)).toEqual({
      uid: user.uid,
      name: user.name,
      email: user.email,
      permissions: ["admin", "signin"],
      organisationSlug: "government-digital-service",
      organisationContentId: "af07d5a5-df63-4ddc-9383-6a666845ebe9",
      disabled: false,
      remotelySignedOut: false,
    });

    const changed = { ...user, name: "Renamed", permissions: ["signin"], organisation_slug: null };
    const updated = await putUser(user.uid, { user: changed }, token);
    expect(updated.statusCode).toBe(200);
    expect(await h.users.findByUid(user.uid)).toEqual({
      uid: user.uid,
      name: "Renamed",
      email: user.email,
      permissions: ["signin"],
      organisationSlug: null,
      organisationContentId: "af07d5a5-df63-4ddc-9383-6a666845ebe9",
      disabled: false,
      remotelySignedOut: false,
    });
  });

  it("changes what a signed-in user may do on their next request", async () => {
    const user = h.signon.addUser(createUser({ permissions: ["admin"] }));
    const browser = new Browser(h.app);
    await browser.signIn(h.signon, user.uid);
    expect((await browser.get("/admin")).statusCode).toBe(200);

    await putUser(user.uid, { user: { ...user, permissions: ["signin"] } }, pushToken());

    const admin = await browser.get("/admin");
    expect(admin.statusCode).toBe(403);
    expect(admin.body).toContain("<code>admin</code>");
  });

  it("signs out a user the push marks disabled", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    await browser.signIn(h.signon, user.uid);

    await putUser(user.uid, { user: { ...user, disabled: true } }, pushToken());

    expect((await browser.get("/")).statusCode).toBe(302);
  });

  it("answers 400 when the uid in the path and in the body differ", async () => {
    const user = createUser();

    const response = await putUser("another-uid", { user }, pushToken());

    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: "invalid_request",
      error_description: "The uid in the path and in the body differ.",
    });
  });

  it.each([
    ["no user envelope", (user: object) => user],
    ["a user without a uid", ({ uid: _uid, ...rest }: { uid: string }) => ({ user: rest })],
    ["permissions that are not an array", (user: object) => ({ user: { ...user, permissions: "admin" } })],
    ["a permission that is not a string", (user: object) => ({ user: { ...user, permissions: ["signin", 7] } })],
    ["a name that is not a string", (user: object) => ({ user: { ...user, name: null } })],
    ["disabled that is not a boolean", (user: object) => ({ user: { ...user, disabled: "yes" } })],
    ["an array", () => [1, 2]],
  ])("answers 400 invalid_request for a body with %s", async (_case, makeBody) => {
    const user = createUser();

    const response = await putUser(user.uid, makeBody(user as never), pushToken());

    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "invalid_request", error_description: expect.any(String) as unknown });
    expect(await h.users.findByUid(user.uid)).toBeNull();
  });

  it("answers 400 invalid_request for a body that is not JSON", async () => {
    const response = await h.app.inject({
      method: "PUT",
      url: "/auth/gds/api/users/abc",
      headers: { authorization: `Bearer ${pushToken()}`, "content-type": "application/json" },
      payload: '{"user": ',
    });

    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "invalid_request", error_description: expect.any(String) as unknown });
  });

  it("answers 400 invalid_request for a plain-text body", async () => {
    const response = await h.app.inject({
      method: "PUT",
      url: "/auth/gds/api/users/abc",
      headers: { authorization: `Bearer ${pushToken()}`, "content-type": "text/plain" },
      payload: "user",
    });

    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "invalid_request", error_description: expect.any(String) as unknown });
  });

  it("answers 415 invalid_request for a body of a media type it does not read", async () => {
    const response = await h.app.inject({
      method: "PUT",
      url: "/auth/gds/api/users/abc",
      headers: { authorization: `Bearer ${pushToken()}`, "content-type": "application/xml" },
      payload: "<user/>",
    });

    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({ error: "invalid_request", error_description: expect.any(String) as unknown });
  });

  it("checks the token before reading the body", async () => {
    const response = await h.app.inject({
      method: "PUT",
      url: "/auth/gds/api/users/abc",
      headers: { "content-type": "application/json" },
      payload: "not json",
    });

    expect(response.statusCode).toBe(401);
  });
});

describe("POST /auth/gds/api/users/:uid/reauth", () => {
  it("ends the user's session so the next request starts sign-in again", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    await browser.signIn(h.signon, user.uid);
    expect((await browser.get("/")).statusCode).toBe(200);

    const response = await reauth(user.uid, pushToken());

    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({});
    const next = await browser.get("/");
    expect(next.statusCode).toBe(302);
    expect(location(next)).toBe("/auth/gds?return_to=%2F");
    expect(await h.users.findByUid(user.uid)).toEqual(expect.objectContaining({ remotelySignedOut: true }));
  });

  it("ends every session of the user and no one else's", async () => {
    const user = h.signon.addUser(createUser());
    const other = h.signon.addUser(createUser());
    const [laptop, phone, colleague] = [new Browser(h.app), new Browser(h.app), new Browser(h.app)];
    await laptop.signIn(h.signon, user.uid);
    await phone.signIn(h.signon, user.uid);
    await colleague.signIn(h.signon, other.uid);

    await reauth(user.uid, pushToken());

    expect((await laptop.get("/")).statusCode).toBe(302);
    expect((await phone.get("/")).statusCode).toBe(302);
    expect((await colleague.get("/")).statusCode).toBe(200);
  });

  it("lets the user sign in again afterwards", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    await browser.signIn(h.signon, user.uid);
    await reauth(user.uid, pushToken());

    await browser.signIn(h.signon, user.uid);

    expect((await browser.get("/")).statusCode).toBe(200);
    expect(await h.users.findByUid(user.uid)).toEqual(expect.objectContaining({ remotelySignedOut: false }));
  });

  it("answers 200 for a user this application never saw", async () => {
    const response = await reauth("00000000-0000-4000-8000-000000000999", pushToken());

    expect(response.statusCode).toBe(200);
  });

  it("answers 401 without a bearer token and 403 without user_update_permission", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    await browser.signIn(h.signon, user.uid);

    expect((await reauth(user.uid, null)).statusCode).toBe(401);
    expect((await reauth(user.uid, h.signon.issueApiToken(user.uid))).statusCode).toBe(403);
    expect((await browser.get("/")).statusCode).toBe(200);
  });
});

describe("mount prefix", () => {
  const custom = useHarness({ plugin: { apiPrefix: "/signon-hooks" } });

  it("serves the receivers under the configured prefix", async () => {
    const pusher = custom.signon.addUser(createUser({ permissions: ["user_update_permission"] }));
    const user = createUser();

    const response = await custom.app.inject({
      method: "PUT",
      url: `/signon-hooks/users/${user.uid}`,
      headers: { authorization: `Bearer ${custom.signon.issueApiToken(pusher.uid)}` },
      payload: { user },
    });

    expect(response.statusCode).toBe(200);
    expect(await custom.users.findByUid(user.uid)).toEqual(expect.objectContaining({ uid: user.uid }));
  });
});

describe("pushes and remembered bearer-token answers", () => {
  function whoami(token: string) {
    return h.app.inject({ method: "GET", url: "/api/whoami", headers: { authorization: `Bearer ${token}` } });
  }

  it("a PUT about a user drops their remembered answers: a suspension holds from the next request", async () => {
    const user = h.signon.addUser(createUser());
    const token = h.signon.issueApiToken(user.uid);
    expect((await whoami(token)).statusCode).toBe(200);
    h.signon.revokeTokensOf(user.uid);
    expect((await whoami(token)).statusCode).toBe(200);

    await putUser(user.uid, { user: { ...user, disabled: true } }, pushToken());

    expect((await whoami(token)).statusCode).toBe(401);
  });

  it("a reauth about a user drops their remembered answers", async () => {
    const user = h.signon.addUser(createUser({ permissions: ["editor"] }));
    const token = h.signon.issueApiToken(user.uid);
    await whoami(token);
    h.signon.addUser({ ...user, permissions: ["signin"] });

    await reauth(user.uid, pushToken());

    expect((await whoami(token)).json()).toMatchObject({ user: { permissions: ["signin"] } });
  });

  it("keeps the answers about other users", async () => {
    const user = h.signon.addUser(createUser());
    const other = h.signon.addUser(createUser());
    const otherToken = h.signon.issueApiToken(other.uid);
    await whoami(otherToken);
    const asked = h.signon.userInfoRequests;

    await putUser(user.uid, { user: { ...user, disabled: true } }, pushToken());
    await whoami(otherToken);

    // One more request: the push token's own check.
    expect(h.signon.userInfoRequests).toBe(asked + 1);
  });
});
