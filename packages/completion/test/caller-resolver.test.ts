import { afterAll, describe, expect, it } from "vitest";
import { parseUserJson, SignonCallerResolver, SignonUnavailableError } from "../src/auth/signon-caller-resolver.js";
import { startSignonStandIn } from "./support/signon-stand-in.js";

const signon = await startSignonStandIn();
afterAll(() => signon.close());

describe("SignonCallerResolver", () => {
  it("resolves a token through GET /user.json", async () => {
    const { token, uid } = signon.issueToken({ email: "ada@example.com", name: "Ada", permissions: ["staff"] });
    const resolver = new SignonCallerResolver({ signonUrl: signon.url, cacheMs: 0 });
    expect(await resolver.resolveCaller(token)).toEqual({ uid, email: "ada@example.com", name: "Ada", permissions: ["signin", "staff"] });
  });

  it("returns null for a token that Sign-on refuses", async () => {
    const resolver = new SignonCallerResolver({ signonUrl: signon.url, cacheMs: 0 });
    expect(await resolver.resolveCaller("unknown")).toBeNull();
  });

  it("reuses an answer until the cache time has passed, then asks again", async () => {
    let now = 1_000_000;
    const { token } = signon.issueToken({ email: "bob@example.com" });
    const resolver = new SignonCallerResolver({ signonUrl: signon.url, cacheMs: 30_000, now: () => now });
    const before = signon.requests;
    await resolver.resolveCaller(token);
    await resolver.resolveCaller(token);
    expect(signon.requests - before).toBe(1);
    signon.revoke(token);
    now += 29_999;
    expect(await resolver.resolveCaller(token)).not.toBeNull();
    now += 1;
    expect(await resolver.resolveCaller(token)).toBeNull();
    expect(signon.requests - before).toBe(2);
  });

  it("asks once for concurrent requests with the same token", async () => {
    const { token } = signon.issueToken({ email: "cy@example.com" });
    const resolver = new SignonCallerResolver({ signonUrl: signon.url, cacheMs: 10_000 });
    const before = signon.requests;
    await Promise.all([resolver.resolveCaller(token), resolver.resolveCaller(token), resolver.resolveCaller(token)]);
    expect(signon.requests - before).toBe(1);
  });

  it("refuses a cache time above 60 seconds", () => {
    expect(() => new SignonCallerResolver({ signonUrl: signon.url, cacheMs: 60_001 })).toThrow(RangeError);
  });

  it("reports Sign-on failures as unavailable, without caching them", async () => {
    let calls = 0;
    const failing: typeof fetch = async () => {
      calls += 1;
      return new Response("oops", { status: 500 });
    };
    const resolver = new SignonCallerResolver({ signonUrl: signon.url, cacheMs: 30_000, fetch: failing });
    await expect(resolver.resolveCaller("t")).rejects.toThrow(new SignonUnavailableError("Sign-on answered /user.json with status 500."));
    await expect(resolver.resolveCaller("t")).rejects.toThrow(SignonUnavailableError);
    expect(calls).toBe(2);
    const unreachable = new SignonCallerResolver({ signonUrl: "http://127.0.0.1:1", cacheMs: 0 });
    await expect(unreachable.resolveCaller("t")).rejects.toThrow(/Sign-on did not answer/);
  });
});

describe("parseUserJson", () => {
  it.each([
    [null],
    [{}],
    [{ user: { uid: "u", email: "e", name: "n" } }],
    [{ user: { uid: "u", email: "e", name: "n", permissions: [1] } }],
    [{ user: { uid: 1, email: "e", name: "n", permissions: [] } }],
  ])("refuses %j", (body) => {
    expect(parseUserJson(body)).toBeNull();
  });
});

describe("the /user.json request", () => {
  it("keeps a path prefix of the Sign-on URL and sends the token as a bearer credential", async () => {
    const seen: { url: string; method: string | undefined; authorization: string | null }[] = [];
    const recording: typeof fetch = async (input, init) => {
      seen.push({ url: String(input), method: init?.method, authorization: new Headers(init?.headers).get("authorization") });
      return new Response(JSON.stringify({ user: { uid: "u", email: "e@example.com", name: "E", permissions: ["signin"] } }), { status: 200 });
    };
    const resolver = new SignonCallerResolver({ signonUrl: "https://sso.example.com/signon/", cacheMs: 0, fetch: recording });
    await resolver.resolveCaller("abc123");
    expect(seen).toEqual([{ url: "https://sso.example.com/signon/user.json", method: "GET", authorization: "Bearer abc123" }]);
  });
});
