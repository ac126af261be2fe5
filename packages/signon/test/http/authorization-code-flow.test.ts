import { describe, expect, it } from "vitest";
import { InjectBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { authorizeUrl, obtainCode } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { signon } = await useTestSignon();

async function tokenRequest(fields: Record<string, string>, headers: Record<string, string> = {}) {
  return signon.app.inject({
    method: "POST",
    url: "/token",
    headers: { "content-type": "application/x-www-form-urlencoded; charset=UTF-8", ...headers },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** Signs in through the browser flow with `state=xyz` and returns the redirect and its code. */
function signInAndGetCode(client: Awaited<ReturnType<typeof createApp>>, email: string, extra: Record<string, string> = {}) {
  return obtainCode(signon.app, client, email, { state: "xyz", ...extra });
}

describe("GET /oauth/authorize", () => {
  it("sends a signed-out user to the sign-in page and back, then redirects with a code and the same state", async () => {
    const client = await createApp(signon.ctx);
    const user = await createUser(signon.ctx, { permissions: { [client.application.name]: ["signin"] } });
    const { location, code } = await signInAndGetCode(client, user.email);
    expect(`${location.origin}${location.pathname}`).toBe(client.redirectUri);
    expect(code).toMatch(/^[0-9a-f]{64}$/);
    expect(location.searchParams.get("state")).toBe("xyz");
    expect(location.searchParams.get("iss")).toBe("http://localhost:3000");
  });

  it("shows a 403 page naming the application to a user without signin", async () => {
    const client = await createApp(signon.ctx, { name: "Publisher" });
    const user = await createUser(signon.ctx);
    const browser = new InjectBrowser(signon.app);
    const url = authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s" });
    const signedIn = await browser.signIn(url, user.email, defaultPassword);
    const page = await browser.get(signedIn.headers.location as string);
    expect(page.statusCode).toBe(403);
    expect(page.headers.location).toBeUndefined();
    expect(page.body).toContain("You do not have access to Publisher");
  });
});

describe("POST /token", () => {
  it("exchanges a code for tokens (S4) that /user.json accepts", async () => {
    const client = await createApp(signon.ctx, { name: "Publisher", permissions: ["admin", "editor"] });
    const user = await createUser(signon.ctx, { name: "Ada Lovelace", permissions: { Publisher: ["signin", "editor"] } });
    const { code } = await signInAndGetCode(client, user.email);

    const response = await tokenRequest({
      grant_type: "authorization_code",
      code,
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers["cache-control"]).toBe("no-store");
    expect(response.headers.pragma).toBe("no-cache");
    const body = response.json<Record<string, unknown>>();
    expect(body).toEqual({
      access_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      token_type: "Bearer",
      expires_in: 7200,
      refresh_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      created_at: Math.floor(signon.clock.now().getTime() / 1000),
    });

    const me = await signon.app.inject({ method: "GET", url: "/user.json", headers: { authorization: `Bearer ${String(body.access_token)}` } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toEqual({
      user: {
        uid: user.uid,
        name: "Ada Lovelace",
        email: user.email,
        permissions: ["editor", "signin"],
        organisation_slug: null,
        organisation_content_id: null,
        disabled: false,
      },
    });
  });
});
