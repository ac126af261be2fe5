import { useTestDatabase } from "@tessera/db/testing";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { PostgresSessionStore, PostgresUserStore, signonClientMigrations } from "../src/postgres/index.js";
import { Browser } from "./support/browser.js";
import { createUser, useHarness } from "./support/client-app.js";

const database = await useTestDatabase({ migrations: [signonClientMigrations] });
afterAll(() => database.close());
beforeEach(() => database.reset());

const h = useHarness({
  expiresInSeconds: 7200,
  users: new PostgresUserStore(database.pool),
  sessions: new PostgresSessionStore(database.pool),
});

function pushToken(): string {
  const pusher = h.signon.addUser(createUser({ permissions: ["user_update_permission"] }));
  return h.signon.issueApiToken(pusher.uid);
}

describe("the client on PostgreSQL stores", () => {
  it("signs in, refreshes once for concurrent requests, and signs out on reauth", async () => {
    const user = h.signon.addUser(createUser({ permissions: ["admin"] }));
    const browser = new Browser(h.app);
    await browser.signIn(h.signon, user.uid);
    expect((await browser.get("/admin")).statusCode).toBe(200);

    h.clock.advanceSeconds(7000);
    const responses = await Promise.all([browser.get("/"), browser.get("/"), browser.get("/")]);
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200]);
    expect(h.signon.tokenRequests.filter((form) => form.grant_type === "refresh_token")).toHaveLength(1);

    const reauth = await h.app.inject({
      method: "POST",
      url: `/auth/gds/api/users/${user.uid}/reauth`,
      headers: { authorization: `Bearer ${pushToken()}` },
      payload: {},
    });
    expect(reauth.statusCode).toBe(200);
    expect((await browser.get("/")).statusCode).toBe(302);
  });

  it("applies a permissions push to the stored user", async () => {
    const user = createUser({ permissions: ["admin"] });

    const response = await h.app.inject({
      method: "PUT",
      url: `/auth/gds/api/users/${user.uid}`,
      headers: { authorization: `Bearer ${pushToken()}` },
      payload: { user },
    });

    expect(response.statusCode).toBe(200);
    expect(await h.users.findByUid(user.uid)).toEqual(expect.objectContaining({ permissions: ["admin", "signin"] }));
  });
});

describe("push receivers on PostgreSQL with text it cannot store", () => {
  it.each([
    ["a NUL in the name", "name", "user.name", "Ada\u0000Lovelace"],
    ["a NUL in a permission", "permissions", "user.permissions.1", ["signin", "ad\u0000min"]],
    ["an unpaired surrogate in the e-mail address", "email", "user.email", "ada\uD800@example.org"],
    ["a lone low surrogate in the organisation slug", "organisation_slug", "user.organisation_slug", "\uDC00cabinet-office"],
  ])("PUT /auth/gds/api/users/:uid answers %s with 400 and stores nothing", async (_name, field, path, value) => {
    const user = { ...createUser(), [field]: value };

    const response = await h.app.inject({
      method: "PUT",
      url: `/auth/gds/api/users/${user.uid}`,
      headers: { authorization: `Bearer ${pushToken()}` },
      payload: { user },
    });

    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "invalid_request", error_description: `${path} holds a NUL character or an unpaired surrogate.` });
    expect(await h.users.findByUid(user.uid)).toBeNull();
  });

  it("PUT /auth/gds/api/users/:uid answers a NUL in the uid with 400", async () => {
    const user = { ...createUser(), uid: "a\u0000b" };

    const response = await h.app.inject({ method: "PUT", url: "/auth/gds/api/users/a%00b", headers: { authorization: `Bearer ${pushToken()}` }, payload: { user } });

    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "invalid_request", error_description: "uid holds a NUL character or an unpaired surrogate." });
  });

  it("POST /auth/gds/api/users/:uid/reauth answers a NUL in the uid with 400", async () => {
    const response = await h.app.inject({ method: "POST", url: "/auth/gds/api/users/a%00b/reauth", headers: { authorization: `Bearer ${pushToken()}` }, payload: {} });

    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "invalid_request", error_description: "uid holds a NUL character or an unpaired surrogate." });
  });

  it("keeps a surrogate pair (an emoji) as it was sent", async () => {
    const user = { ...createUser(), name: "Ada 😀" };

    const response = await h.app.inject({ method: "PUT", url: `/auth/gds/api/users/${user.uid}`, headers: { authorization: `Bearer ${pushToken()}` }, payload: { user } });

    expect(response.statusCode).toBe(200);
    expect(await h.users.findByUid(user.uid)).toEqual(expect.objectContaining({ name: "Ada 😀" }));
  });
});
