import { describe, expect, it } from "vitest";
import { codeChallengeS256 } from "../src/oauth/pkce.js";
import { Browser, authorize, location } from "./support/browser.js";
import { CLIENT, buildClientApp, createUser, useHarness } from "./support/client-app.js";

const h = useHarness();

/** The client app with an https redirect URI, closed by `await using`. */
async function secureApp() {
  const app = await buildClientApp(h.signon.url, h.clock, { users: h.users, sessions: h.sessions }, {
    redirectUri: "https://app.example.org/auth/gds/callback",
  });
  return { app, [Symbol.asyncDispose]: () => app.close() };
}

describe("GET /auth/gds", () => {
  it("sends the browser to Sign-on's authorize endpoint with state and an S256 code challenge", async () => {
    const response = await new Browser(h.app).get("/auth/gds");

    expect(response.statusCode).toBe(302);
    const url = new URL(location(response));
    expect(`${url.origin}${url.pathname}`).toBe(`${h.signon.url}/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: "code",
      client_id: CLIENT.clientId,
      redirect_uri: CLIENT.redirectUri,
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) as unknown,
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) as unknown,
      code_challenge_method: "S256",
    });
  });

  it("sets an HttpOnly, SameSite=Lax session cookie", async () => {
    const response = await new Browser(h.app).get("/auth/gds");

    expect(response.cookies).toEqual([
      expect.objectContaining({ name: "signon_client_session", path: "/", httpOnly: true, sameSite: "Lax" }),
    ]);
    expect(response.cookies[0]?.secure).toBeUndefined();
  });

  it("marks the cookie Secure when the redirect URI is https", async () => {
    await using secure = await secureApp();

    const response = await secure.app.inject({ method: "GET", url: "/auth/gds" });

    expect(response.cookies[0]).toEqual(
      expect.objectContaining({ name: "signon_client_session", httpOnly: true, secure: true, sameSite: "Lax" }),
    );
  });

  it("uses a new state for every sign-in", async () => {
    const first = new URL(location(await new Browser(h.app).get("/auth/gds")));
    const second = new URL(location(await new Browser(h.app).get("/auth/gds")));

    expect(first.searchParams.get("state")).not.toBe(second.searchParams.get("state"));
  });

  it("sends a signed-out browser from a guarded page to sign in, and back there afterwards", async () => {
    const user = h.signon.addUser(createUser({ permissions: ["admin"] }));
    const browser = new Browser(h.app);

    const guarded = await browser.get("/admin?tab=2");
    expect(guarded.statusCode).toBe(302);
    expect(location(guarded)).toBe("/auth/gds?return_to=%2Fadmin%3Ftab%3D2");

    const callback = await browser.signIn(h.signon, user.uid, "/admin?tab=2");
    expect(location(callback)).toBe("/admin?tab=2");
  });

  it("ends the browser's previous session when it starts signing in again", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    await browser.signIn(h.signon, user.uid);
    const old = new Browser(h.app);
    old.cookies.set("signon_client_session", browser.cookies.get("signon_client_session") ?? "");

    await browser.get("/auth/gds");

    expect((await old.get("/")).statusCode).toBe(302);
  });

  it("never returns to another site after sign-in", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    h.signon.signedInUid = user.uid;

    const start = await browser.get("/auth/gds?return_to=//evil.example/");
    const callback = await browser.get(await authorize(location(start)));

    expect(location(callback)).toBe("/");
  });
});

describe("GET /auth/gds/callback", () => {
  it("exchanges the code at /token with the PKCE verifier and the client credentials", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    h.signon.signedInUid = user.uid;
    const start = await browser.get("/auth/gds");
    const challenge = new URL(location(start)).searchParams.get("code_challenge");

    const callback = await browser.get(await authorize(location(start)));

    expect(callback.statusCode).toBe(302);
    expect(h.signon.tokenRequests).toEqual([
      {
        grant_type: "authorization_code",
        code: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
        redirect_uri: CLIENT.redirectUri,
        code_verifier: expect.any(String) as unknown,
        client_id: CLIENT.clientId,
        client_secret: CLIENT.clientSecret,
      },
    ]);
    expect(codeChallengeS256(h.signon.tokenRequests[0]?.code_verifier ?? "")).toBe(challenge);
  });

  it("builds its calls to Sign-on with @tessera/endpoint", async () => {
    const user = h.signon.addUser(createUser());
    h.signon.userAgents.clear();

    await new Browser(h.app).signIn(h.signon, user.uid);

    expect([...h.signon.userAgents]).toEqual([
      expect.stringMatching(/^undici|^node$/) as unknown,
      expect.stringMatching(/^tessera-endpoint\.js\//) as unknown,
    ]);
  });

  it("stores the user from /user.json and signs the browser in", async () => {
    const user = h.signon.addUser(createUser({ permissions: ["editor", "admin"] }));
    const browser = new Browser(h.app);

    await browser.signIn(h.signon, user.uid);
    const home = await browser.get("/");

    expect(home.statusCode).toBe(200);
    const stored = {
      uid: user.uid,
      name: user.name,
      email: user.email,
      permissions: ["admin", "editor", "signin"],
      organisationSlug: "government-digital-service",
      organisationContentId: "af07d5a5-df63-4ddc-9383-6a666845ebe9",
      disabled: false,
      remotelySignedOut: false,
    };
    expect(home.json()).toEqual({ user: stored });
    expect(await h.users.findByUid(user.uid)).toEqual(stored);
  });

  it("gives the browser a new session id at sign-in", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    h.signon.signedInUid = user.uid;
    const start = await browser.get("/auth/gds");
    const before = browser.cookies.get("signon_client_session");

    await browser.get(await authorize(location(start)));

    expect(browser.cookies.get("signon_client_session")).toEqual(expect.any(String));
    expect(browser.cookies.get("signon_client_session")).not.toBe(before);
  });

  it("refuses a state that does not match the sign-in this browser started, without asking for tokens", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    h.signon.signedInUid = user.uid;
    const start = await browser.get("/auth/gds");
    const callback = new URL(await authorize(location(start)), "http://app.test");
    callback.searchParams.set("state", "forged-state");

    const response = await browser.get(`${callback.pathname}${callback.search}`);

    expect(response.statusCode).toBe(400);
    expect(response.body).toContain("Sign-in failed");
    expect(h.signon.tokenRequests).toEqual([]);
    expect((await browser.get("/")).statusCode).toBe(302);
  });

  it("refuses a callback when this browser started no sign-in", async () => {
    const user = h.signon.addUser(createUser());
    h.signon.signedInUid = user.uid;
    const start = await new Browser(h.app).get("/auth/gds");
    const callback = await authorize(location(start));

    const response = await new Browser(h.app).get(callback);

    expect(response.statusCode).toBe(400);
    expect(h.signon.tokenRequests).toEqual([]);
  });

  it("does not sign a signed-in browser out when it opens a stale callback URL again", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    h.signon.signedInUid = user.uid;
    const start = await browser.get("/auth/gds");
    const callback = await authorize(location(start));
    await browser.get(callback);

    const again = await browser.get(callback);

    expect(again.statusCode).toBe(400);
    expect((await browser.get("/")).statusCode).toBe(200);
  });

  it("refuses the same callback twice", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    h.signon.signedInUid = user.uid;
    const start = await browser.get("/auth/gds");
    const startCookie = browser.cookies.get("signon_client_session") ?? "";
    const callback = await authorize(location(start));
    await browser.get(callback);

    const replay = new Browser(h.app);
    replay.cookies.set("signon_client_session", startCookie);
    const response = await replay.get(callback);

    expect(response.statusCode).toBe(400);
    expect(h.signon.tokenRequests).toHaveLength(1);
  });

  it("refuses an error answer from Sign-on", async () => {
    const browser = new Browser(h.app);
    const start = await browser.get("/auth/gds");
    const state = new URL(location(start)).searchParams.get("state") ?? "";

    const response = await browser.get(`/auth/gds/callback?error=access_denied&state=${state}`);

    expect(response.statusCode).toBe(400);
  });

  it("answers 503 when Sign-on cannot be reached for the token", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    h.signon.signedInUid = user.uid;
    const start = await browser.get("/auth/gds");
    const callback = await authorize(location(start));
    h.network.down = true;

    const response = await browser.get(callback);

    expect(response.statusCode).toBe(503);
    expect(response.body).toContain("Sign-on is unavailable");
  });
});

describe("GET /auth/gds/sign_out", () => {
  it("ends the session here and sends the browser to Sign-on's sign-out page", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    await browser.signIn(h.signon, user.uid);
    const sessionId = browser.cookies.get("signon_client_session") ?? "";

    const response = await browser.get("/auth/gds/sign_out");

    expect(response.statusCode).toBe(302);
    expect(location(response)).toBe(`${h.signon.url}/`);
    const stale = new Browser(h.app);
    stale.cookies.set("signon_client_session", sessionId);
    expect((await stale.get("/")).statusCode).toBe(302);
  });
});
