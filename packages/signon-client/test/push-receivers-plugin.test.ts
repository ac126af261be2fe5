import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBearerTokenVerifier, type BearerTokenVerifier } from "../src/bearer/bearer-token-verifier.js";
import { signonBearerPlugin, signonPushReceiversPlugin } from "../src/fastify/index.js";
import { ManualClock, StandInSignon } from "../src/testing/index.js";
import type { SignonUserJson } from "../src/user.js";
import { CLIENT, createUser } from "./support/client-app.js";

let clock: ManualClock;
let signon: StandInSignon;
let api: FastifyInstance;
let updates: SignonUserJson[];
let reauths: string[];

beforeEach(async () => {
  clock = new ManualClock();
  signon = new StandInSignon({ client: CLIENT, clock });
  await signon.listen();
  updates = [];
  reauths = [];
  api = Fastify();
  await api.register(signonBearerPlugin, { signonUrl: signon.url, clientId: CLIENT.clientId, clock });
  await api.register(signonPushReceiversPlugin, {
    prefix: "/auth/gds/api",
    verifier: api.signonBearer.verifier,
    onUserUpdate: (user) => updates.push(user),
    onReauth: (uid) => reauths.push(uid),
  });
  api.get("/reports", { onRequest: api.signonBearer.requireBearerToken(["staff"]) }, (request) => ({ uid: request.signonApiUser?.uid }));
});

afterEach(async () => {
  await api.close();
  await signon.close();
});

function getReports(token: string) {
  return api.inject({ method: "GET", url: "/reports", headers: { authorization: `Bearer ${token}` } });
}

function pushToken(): string {
  return signon.issueApiToken(signon.addUser(createUser({ name: "Sign-on push", permissions: ["user_update_permission"] })).uid);
}

function putUser(user: SignonUserJson, token: string) {
  return api.inject({ method: "PUT", url: `/auth/gds/api/users/${user.uid}`, headers: { authorization: `Bearer ${token}` }, payload: { user } });
}

function reauth(uid: string, token: string) {
  return api.inject({ method: "POST", url: `/auth/gds/api/users/${uid}/reauth`, headers: { authorization: `Bearer ${token}` }, payload: {} });
}

describe("signonPushReceiversPlugin (an API-only service)", () => {
  it("PUT /users/:uid drops the user's remembered answers, so a revoked permission holds from the next request", async () => {
    const staff = signon.addUser(createUser({ permissions: ["staff"] }));
    const token = signon.issueApiToken(staff.uid);
    expect((await getReports(token)).statusCode).toBe(200);
    const changed = signon.addUser({ ...staff, permissions: ["signin"] });
    expect((await getReports(token)).statusCode).toBe(200);

    const pushed = await putUser(changed, pushToken());

    expect(pushed.statusCode).toBe(200);
    expect(pushed.json()).toEqual({});
    expect(updates).toEqual([changed]);
    expect((await getReports(token)).statusCode).toBe(403);
  });

  it("POST /users/:uid/reauth drops the user's remembered answers, so a suspension holds from the next request", async () => {
    const staff = signon.addUser(createUser({ permissions: ["staff"] }));
    const token = signon.issueApiToken(staff.uid);
    await getReports(token);
    signon.revokeTokensOf(staff.uid);

    const pushed = await reauth(staff.uid, pushToken());

    expect(pushed.statusCode).toBe(200);
    expect(reauths).toEqual([staff.uid]);
    expect((await getReports(token)).statusCode).toBe(401);
  });

  it("answers 401 without a token and 403 to a token without user_update_permission, and drops nothing", async () => {
    const staff = signon.addUser(createUser({ permissions: ["staff"] }));
    const token = signon.issueApiToken(staff.uid);
    await getReports(token);
    signon.revokeTokensOf(staff.uid);

    const missing = await api.inject({ method: "POST", url: `/auth/gds/api/users/${staff.uid}/reauth`, payload: {} });
    const forbidden = await reauth(staff.uid, token);

    expect(missing.statusCode).toBe(401);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toEqual({ error: "insufficient_scope", error_description: "The bearer token's user lacks: user_update_permission." });
    expect(reauths).toEqual([]);
    expect((await getReports(token)).statusCode).toBe(200);
  });

  it("answers 400 invalid_request to a body that is not a user", async () => {
    const response = await api.inject({
      method: "PUT",
      url: "/auth/gds/api/users/abc",
      headers: { authorization: `Bearer ${pushToken()}` },
      payload: { user: { uid: "abc", permissions: "staff" } },
    });

    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "invalid_request", error_description: expect.any(String) as unknown });
    expect(updates).toEqual([]);
  });
});

describe("BearerTokenVerifier.forgetUser", () => {
  /** A verifier whose /user.json answers wait until `release()` is called. */
  function gatedVerifier(users: Map<string, SignonUserJson>): { verifier: BearerTokenVerifier; release: () => void; asked: () => number } {
    let asked = 0;
    let opened: () => void = () => undefined;
    let gate = new Promise<void>((resolve) => (opened = resolve));
    const verifier = createBearerTokenVerifier({
      signonUrl: "http://signon.test",
      clientId: CLIENT.clientId,
      clock,
      fetch: async (_url, init) => {
        asked += 1;
        const token = new Headers(init.headers).get("authorization")?.replace("Bearer ", "") ?? "";
        const user = users.get(token);
        await gate;
        return user ? Response.json({ user }) : new Response("{}", { status: 401 });
      },
    });
    return {
      verifier,
      release: () => {
        opened();
        gate = new Promise<void>((resolve) => (opened = resolve));
      },
      asked: () => asked,
    };
  }

  it("drops only the answers about that user and says how many", async () => {
    const ada = createUser();
    const bob = createUser();
    const users = new Map([
      ["t-ada-1", ada],
      ["t-ada-2", ada],
      ["t-bob", bob],
    ]);
    const { verifier, release } = gatedVerifier(users);
    const checks = [...users.keys()].map((token) => verifier.verify(token));
    release();
    await Promise.all(checks);

    expect(verifier.forgetUser(ada.uid)).toBe(2);
    expect(verifier.cachedEntries).toBe(1);
  });

  it("does not remember, nor share with later requests, an answer asked for before the push arrived", async () => {
    const ada = createUser();
    const users = new Map([["t-ada", ada]]);
    const { verifier, release, asked } = gatedVerifier(users);
    const before = verifier.verify("t-ada");
    while (asked() === 0) await new Promise((resolve) => setImmediate(resolve));

    verifier.forgetUser(ada.uid);
    users.delete("t-ada");
    const after = verifier.verify("t-ada");
    release();

    expect(await before).toMatchObject({ uid: ada.uid });
    expect(await after).toBeNull();
    expect(asked()).toBe(2);
    expect(verifier.cachedEntries).toBe(1);
    const again = verifier.verify("t-ada");
    release();
    expect(await again).toBeNull();
    expect(asked()).toBe(2);
  });
});
