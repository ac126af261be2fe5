import { describe, expect, it } from "vitest";
import { BoundedTtlCache } from "../src/bearer/bounded-ttl-cache.js";
import { bearerTokenFromHeader } from "../src/bearer/bearer-token-verifier.js";
import { resolveSignonClientConfig } from "../src/config.js";
import { safeReturnPath } from "../src/sign-in/start-sign-in.js";
import { MemorySessionStore } from "../src/storage/memory-session-store.js";
import { MemoryUserStore } from "../src/storage/memory-user-store.js";

describe("safeReturnPath", () => {
  it.each([
    ["/admin?tab=2", "/admin?tab=2"],
    [undefined, "/"],
    ["https://evil.example/", "/"],
    ["//evil.example/", "/"],
    ["/\\evil.example/", "/"],
    ["/a\nLocation: x", "/"],
    ["admin", "/"],
  ])("keeps only local paths: %j becomes %j", (input, expected) => {
    expect(safeReturnPath(input)).toBe(expected);
  });
});

describe("bearerTokenFromHeader", () => {
  it.each([
    ["Bearer abc123", "abc123"],
    ["bearer abc-._~+/=", "abc-._~+/="],
    [undefined, null],
    ["Basic eDp5", null],
    ["Bearer ", null],
    ["Bearer a b", null],
  ])("reads %j as %j", (header, token) => {
    expect(bearerTokenFromHeader(header)).toBe(token);
  });
});

describe("BoundedTtlCache", () => {
  it("forgets an entry once its time is up", () => {
    const cache = new BoundedTtlCache<string>(1000, 10);
    cache.set("a", "A", 0);

    expect(cache.get("a", 999)).toBe("A");
    expect(cache.get("a", 1000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("drops the oldest entry when full", () => {
    const cache = new BoundedTtlCache<number>(1000, 2);
    cache.set("a", 1, 0);
    cache.set("b", 2, 0);
    cache.set("c", 3, 0);

    expect([cache.get("a", 1), cache.get("b", 1), cache.get("c", 1)]).toEqual([undefined, 2, 3]);
  });

  it("remembers nothing with a size of 0", () => {
    const cache = new BoundedTtlCache<number>(1000, 0);
    cache.set("a", 1, 0);

    expect(cache.get("a", 1)).toBeUndefined();
  });
});

describe("resolveSignonClientConfig", () => {
  const valid = {
    signonUrl: "https://signon.example.org/",
    clientId: "id",
    clientSecret: "secret",
    redirectUri: "https://app.example.org/auth/gds/callback",
    userStore: new MemoryUserStore(),
    sessionStore: new MemorySessionStore(),
  };

  it("fills in the documented defaults", () => {
    const config = resolveSignonClientConfig(valid);

    expect({ ...config, fetch: undefined, clock: undefined, userStore: undefined, sessionStore: undefined }).toEqual({
      signonUrl: "https://signon.example.org",
      clientId: "id",
      clientSecret: "secret",
      redirectUri: "https://app.example.org/auth/gds/callback",
      userStore: undefined,
      sessionStore: undefined,
      fetch: undefined,
      clock: undefined,
      paths: { authorize: "/oauth/authorize", token: "/token", userInfo: "/user.json", signOut: "/" },
      sessionTtlSeconds: 72000,
      signInTtlSeconds: 600,
      refreshMarginSeconds: 300,
      bearerCacheTtlSeconds: 60,
      bearerCacheMaxEntries: 10000,
      bearerStaleIfErrorSeconds: 0,
      requestTimeoutMs: 10000,
      mockUser: null,
    });
  });

  it.each([
    [{ signonUrl: "signon" }, 'signonUrl must be an absolute URL, got "signon"'],
    [{ redirectUri: "ftp://app/cb" }, 'redirectUri must be an http(s) URL, got "ftp://app/cb"'],
    [{ clientId: "" }, "clientId is required"],
    [{ clientSecret: "" }, "clientSecret is required"],
    [{ sessionTtlSeconds: -1 }, "sessionTtlSeconds must be a number of at least 0, got -1"],
  ])("refuses %j", (change, message) => {
    expect(() => resolveSignonClientConfig({ ...valid, ...change })).toThrow(message);
  });
});
