import { useTestDatabase } from "@tessera/db/testing";
import { signonMigrations } from "@tessera/signon";
import { afterAll, describe, expect, it, vi } from "vitest";
import { SignonCallerResolver, SignonUnavailableError } from "../src/auth/signon-caller-resolver.js";
import { startRealSignon } from "./support/real-signon.js";

const database = await useTestDatabase({ migrations: [signonMigrations], label: "completion_callers" });
const signon = await startRealSignon(database);
afterAll(async () => {
  await signon.close();
  await database.close();
});

/**
 * Waits until Sign-on itself refuses `token`. A change made by another process (the CLI) reaches the
 * running Sign-on's remembered token answers through a database notification: within milliseconds, and
 * within 5 s or Sign-on stops remembering them.
 */
async function untilSignonRefuses(token: string): Promise<void> {
  await vi.waitFor(async () => {
    const response = await fetch(`${signon.url}/user.json`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(401);
  }, { timeout: 5_000 });
}

describe("SignonCallerResolver with the real Sign-on", () => {
  it("resolves a token Sign-on issued to the user and their permissions on completion", async () => {
    const { token, uid } = await signon.tokenFor("ada@example.com", ["staff"]);
    const resolver = new SignonCallerResolver({ signonUrl: signon.url, clientId: signon.clientId, cacheSeconds: 0 });
    expect(await resolver.resolveCaller(token)).toEqual({ uid, email: "ada@example.com", name: "ada", permissions: ["signin", "staff"] });
  });

  it("returns null for a token that Sign-on refuses", async () => {
    const resolver = new SignonCallerResolver({ signonUrl: signon.url, clientId: signon.clientId, cacheSeconds: 0 });
    expect(await resolver.resolveCaller("0".repeat(64))).toBeNull();
  });

  it("returns null for a token issued to another application, even one where its user holds admin", async () => {
    await signon.cli("apps", "create", "--name", "Reports", "--redirect-uri", "http://127.0.0.1:3009/auth/gds/callback", "--permissions", "admin,staff");
    await signon.cli("api-users", "create", "--email", "reports-robot@example.com", "--name", "Reports robot");
    await signon.cli("permissions", "grant", "--email", "reports-robot@example.com", "--app", "Reports", "--permissions", "signin,admin,staff");
    const issued = await signon.cli("tokens", "issue", "--email", "reports-robot@example.com", "--app", "Reports");
    const reportsToken = String(issued["access_token"]);
    const asReports = await fetch(`${signon.url}/user.json`, { headers: { authorization: `Bearer ${reportsToken}` } });
    expect(asReports.status).toBe(200);

    const resolver = new SignonCallerResolver({ signonUrl: signon.url, clientId: signon.clientId, cacheSeconds: 0 });

    expect(await resolver.resolveCaller(reportsToken)).toBeNull();
  });

  it("returns null once the user is suspended in Sign-on", async () => {
    const { token } = await signon.tokenFor("bob@example.com");
    const resolver = new SignonCallerResolver({ signonUrl: signon.url, clientId: signon.clientId, cacheSeconds: 0 });
    expect(await resolver.resolveCaller(token)).not.toBeNull();
    await signon.cli("users", "suspend", "--email", "bob@example.com", "--reason", "left");
    await untilSignonRefuses(token);
    expect(await resolver.resolveCaller(token)).toBeNull();
  });

  it("reuses an answer for cacheSeconds, then asks Sign-on again", async () => {
    let now = 1_000_000;
    const { token } = await signon.tokenFor("cy@example.com");
    const resolver = new SignonCallerResolver({ signonUrl: signon.url, clientId: signon.clientId, cacheSeconds: 30, clock: { now: () => now } });
    expect(await resolver.resolveCaller(token)).not.toBeNull();
    await signon.cli("users", "suspend", "--email", "cy@example.com", "--reason", "left");
    await untilSignonRefuses(token);
    now += 29_999;
    expect(await resolver.resolveCaller(token)).not.toBeNull();
    now += 1;
    expect(await resolver.resolveCaller(token)).toBeNull();
  });

  it("refuses a cache time above 60 seconds", () => {
    expect(() => new SignonCallerResolver({ signonUrl: signon.url, clientId: signon.clientId, cacheSeconds: 61 })).toThrow(RangeError);
  });

  it("reports Sign-on failures as unavailable, without remembering them", async () => {
    let calls = 0;
    const failing = async (): Promise<Response> => {
      calls += 1;
      return new Response("oops", { status: 500 });
    };
    const resolver = new SignonCallerResolver({ signonUrl: signon.url, clientId: signon.clientId, cacheSeconds: 30, fetch: failing });
    await expect(resolver.resolveCaller("t")).rejects.toThrow(SignonUnavailableError);
    await expect(resolver.resolveCaller("t")).rejects.toThrow(SignonUnavailableError);
    expect(calls).toBe(2);
    const unreachable = new SignonCallerResolver({ signonUrl: "http://127.0.0.1:1", clientId: "completion", cacheSeconds: 0 });
    await expect(unreachable.resolveCaller("t")).rejects.toThrow(SignonUnavailableError);
  });
});

describe("the /user.json request", () => {
  it("keeps a path prefix of the Sign-on URL, names completion's client id and sends the token as a bearer credential", async () => {
    const seen: { url: string; method: string | undefined; authorization: string | null }[] = [];
    const recording = async (input: string, init: RequestInit): Promise<Response> => {
      seen.push({ url: input, method: init.method, authorization: new Headers(init.headers).get("authorization") });
      return new Response(JSON.stringify({ user: { uid: "u", email: "e@example.com", name: "E", permissions: ["signin"] } }), { status: 200 });
    };
    const resolver = new SignonCallerResolver({ signonUrl: "https://sso.example.com/signon/", clientId: "completion", cacheSeconds: 0, fetch: recording });
    expect(await resolver.resolveCaller("abc123")).toEqual({ uid: "u", email: "e@example.com", name: "E", permissions: ["signin"] });
    expect(seen).toEqual([{ url: "https://sso.example.com/signon/user.json?client_id=completion", method: "GET", authorization: "Bearer abc123" }]);
  });
});
