import { describe, expect, it } from "vitest";
import { Browser, location } from "./support/browser.js";
import { createUser, useHarness } from "./support/client-app.js";

// Tokens live 7200 s; the client refreshes 300 s before expiry (the default margin).
const h = useHarness({ expiresInSeconds: 7200 });

async function signedInBrowser(permissions: string[] = []) {
  const user = h.signon.addUser(createUser({ permissions }));
  const browser = new Browser(h.app);
  await browser.signIn(h.signon, user.uid);
  return { user, browser };
}

function refreshRequests() {
  return h.signon.tokenRequests.filter((form) => form.grant_type === "refresh_token");
}

describe("token refresh driven by expires_in", () => {
  it("does not refresh while the access token is far from expiry", async () => {
    const { browser } = await signedInBrowser();
    h.clock.advanceSeconds(7200 - 301);

    expect((await browser.get("/")).statusCode).toBe(200);
    expect(refreshRequests()).toEqual([]);
  });

  it("refreshes before expiry with the refresh token and the client credentials", async () => {
    const { browser } = await signedInBrowser();
    const [codeExchange] = h.signon.tokenRequests;
    h.clock.advanceSeconds(7200 - 299);

    expect((await browser.get("/")).statusCode).toBe(200);
    expect(codeExchange).toBeDefined();
    expect(refreshRequests()).toEqual([
      {
        grant_type: "refresh_token",
        refresh_token: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
        client_id: "editorial-client-id",
        client_secret: "editorial-client-secret",
      },
    ]);
  });

  it("uses the rotated refresh token for the next refresh", async () => {
    const { browser } = await signedInBrowser();
    h.clock.advanceSeconds(7000);
    await browser.get("/");
    h.clock.advanceSeconds(7000);

    // The stand-in revokes the whole family if a refresh token is presented twice.
    expect((await browser.get("/")).statusCode).toBe(200);
    const [first, second] = refreshRequests();
    expect(second?.refresh_token).toEqual(expect.any(String));
    expect(second?.refresh_token).not.toBe(first?.refresh_token);
    h.clock.advanceSeconds(10);
    expect((await browser.get("/")).statusCode).toBe(200);
    expect(refreshRequests()).toHaveLength(2);
  });

  it("refreshes once when several requests of one session arrive together", async () => {
    const { browser } = await signedInBrowser();
    h.clock.advanceSeconds(7000);

    const responses = await Promise.all([browser.get("/"), browser.get("/"), browser.get("/")]);

    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200]);
    expect(refreshRequests()).toHaveLength(1);
  });

  it("takes the user's current permissions from /user.json after refreshing", async () => {
    const { user, browser } = await signedInBrowser();
    expect((await browser.get("/admin")).statusCode).toBe(403);
    h.signon.addUser({ ...user, permissions: ["admin", "signin"] });
    h.clock.advanceSeconds(7000);

    expect((await browser.get("/admin")).statusCode).toBe(200);
  });

  it("ends the session when Sign-on refuses the refresh", async () => {
    const { user, browser } = await signedInBrowser();
    h.signon.revokeTokensOf(user.uid);
    h.clock.advanceSeconds(7000);

    const response = await browser.get("/");

    expect(response.statusCode).toBe(302);
    expect(location(response)).toBe("/auth/gds?return_to=%2F");
  });

  it("keeps the session when Sign-on cannot be reached, and refreshes once it can", async () => {
    const { browser } = await signedInBrowser();
    h.clock.advanceSeconds(7000);
    h.network.down = true;

    expect((await browser.get("/")).statusCode).toBe(200);
    expect(refreshRequests()).toEqual([]);

    h.network.down = false;
    h.clock.advanceSeconds(31);
    expect((await browser.get("/")).statusCode).toBe(200);
    expect(refreshRequests()).toHaveLength(1);
  });
});

describe("token refresh without rotation", () => {
  const fixed = useHarness({ expiresInSeconds: 7200, rotateRefreshTokens: false });

  it("keeps using the refresh token when Sign-on issues no new one", async () => {
    const user = fixed.signon.addUser(createUser());
    const browser = new Browser(fixed.app);
    await browser.signIn(fixed.signon, user.uid);

    for (const _ of [1, 2]) {
      fixed.clock.advanceSeconds(7000);
      expect((await browser.get("/")).statusCode).toBe(200);
    }

    const refreshes = fixed.signon.tokenRequests.filter((form) => form.grant_type === "refresh_token");
    expect(refreshes).toHaveLength(2);
    expect(refreshes[1]?.refresh_token).toBe(refreshes[0]?.refresh_token);
  });
});
