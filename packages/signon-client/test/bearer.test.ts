import { describe, expect, it } from "vitest";
import { MAX_BEARER_CACHE_TTL_SECONDS, resolveSignonClientConfig } from "../src/config.js";
import { MemorySessionStore } from "../src/storage/memory-session-store.js";
import { MemoryUserStore } from "../src/storage/memory-user-store.js";
import { CLIENT, createUser, useHarness } from "./support/client-app.js";

const h = useHarness({ plugin: { bearerCacheMaxEntries: 3 } });

function whoami(token: string | null) {
  return h.app.inject({
    method: "GET",
    url: "/api/whoami",
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
}

describe("requireBearerToken", () => {
  it("answers with the token's user and this application's permissions", async () => {
    const user = h.signon.addUser(createUser({ permissions: ["editor"] }));

    const response = await whoami(h.signon.issueApiToken(user.uid));

    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      user: {
        uid: user.uid,
        name: user.name,
        email: user.email,
        permissions: ["editor", "signin"],
        organisationSlug: "government-digital-service",
        organisationContentId: "af07d5a5-df63-4ddc-9383-6a666845ebe9",
        disabled: false,
      },
    });
  });

  it("answers 401 without a token, and with a token of another scheme", async () => {
    const missing = await whoami(null);
    const basic = await h.app.inject({ method: "GET", url: "/api/whoami", headers: { authorization: "Basic eDp5" } });

    for (const response of [missing, basic]) {
      expect(response.statusCode).toBe(401);
      expect(response.headers["www-authenticate"]).toBe("Bearer");
    }
    expect(h.signon.userInfoRequests).toBe(0);
  });

  it("answers 401 invalid_token for a token Sign-on rejects", async () => {
    const response = await whoami("not-a-token");

    expect(response.statusCode).toBe(401);
    expect(response.headers["www-authenticate"]).toBe('Bearer error="invalid_token"');
  });

  it("answers 401 invalid_token for a token longer than any Sign-on issues, without asking Sign-on", async () => {
    // 20,000 characters: past Node's 16 KiB request header limit, Sign-on would refuse the request itself.
    const response = await whoami("A".repeat(20_000));

    expect(response.statusCode).toBe(401);
    expect(response.headers["www-authenticate"]).toBe('Bearer error="invalid_token"');
    expect(h.signon.userInfoRequests).toBe(0);
  });

  it("answers 503 when Sign-on cannot be asked, and does not remember that", async () => {
    const user = h.signon.addUser(createUser());
    const token = h.signon.issueApiToken(user.uid);
    h.network.down = true;

    const down = await whoami(token);
    h.network.down = false;
    const up = await whoami(token);

    expect(down.statusCode).toBe(503);
    expect(down.json()).toEqual({
      error: "temporarily_unavailable",
      error_description: "Sign-on cannot check the bearer token right now; try again later.",
    });
    expect(up.statusCode).toBe(200);
  });
});

describe("bearer token cache", () => {
  it("asks Sign-on once per token within 60 seconds", async () => {
    const user = h.signon.addUser(createUser());
    const token = h.signon.issueApiToken(user.uid);

    await whoami(token);
    h.clock.advanceSeconds(59);
    await whoami(token);

    expect(h.signon.userInfoRequests).toBe(1);
  });

  it("asks again once the answer is 60 seconds old, and sees a revocation then", async () => {
    const user = h.signon.addUser(createUser());
    const token = h.signon.issueApiToken(user.uid);
    await whoami(token);
    h.signon.revokeTokensOf(user.uid);

    h.clock.advanceSeconds(60);
    const response = await whoami(token);

    expect(h.signon.userInfoRequests).toBe(2);
    expect(response.statusCode).toBe(401);
  });

  it("remembers rejected tokens too", async () => {
    await whoami("unknown-token");
    await whoami("unknown-token");

    expect(h.signon.userInfoRequests).toBe(1);
  });

  it("asks once for concurrent requests with the same token", async () => {
    const user = h.signon.addUser(createUser());
    const token = h.signon.issueApiToken(user.uid);

    await Promise.all([whoami(token), whoami(token), whoami(token)]);

    expect(h.signon.userInfoRequests).toBe(1);
  });

  it("holds at most the configured number of answers, forgetting the oldest first", async () => {
    const user = h.signon.addUser(createUser());
    const tokens = [1, 2, 3, 4].map(() => h.signon.issueApiToken(user.uid));
    for (const token of tokens) await whoami(token);
    expect(h.signon.userInfoRequests).toBe(4);

    await whoami(tokens[3] ?? "");
    expect(h.signon.userInfoRequests).toBe(4);
    await whoami(tokens[0] ?? "");
    expect(h.signon.userInfoRequests).toBe(5);
  });
});

describe("bearer cache configuration", () => {
  it("refuses a cache lifetime over 60 seconds", () => {
    expect(() =>
      resolveSignonClientConfig({
        signonUrl: "http://127.0.0.1:3000",
        ...CLIENT,
        userStore: new MemoryUserStore(),
        sessionStore: new MemorySessionStore(),
        bearerCacheTtlSeconds: MAX_BEARER_CACHE_TTL_SECONDS + 1,
      }),
    ).toThrow("bearerCacheTtlSeconds must be at most 60, got 61");
  });
});
