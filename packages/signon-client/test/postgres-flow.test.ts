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
