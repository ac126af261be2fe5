import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { suspendUser } from "../../src/accounts/manage-users.js";
import { retireApplication } from "../../src/applications/retire-application.js";
import { rotateClientSecret } from "../../src/applications/rotate-secret.js";
import { createApp, createUser } from "../support/factories.js";
import { basicAuth, exchangeCode, getUserJson, obtainCode, postForm, refresh, type TestClient } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { signon } = await useTestSignon();

async function setup(options: { requirePkce?: boolean } = {}) {
  const client = await createApp(signon.ctx, { name: "Publisher", requirePkce: options.requirePkce });
  const user = await createUser(signon.ctx, { permissions: { Publisher: ["signin"] } });
  return { client, user };
}

describe("POST /token with grant_type=authorization_code", () => {
  it("accepts client credentials by HTTP Basic, on every alias", async () => {
    const { client, user } = await setup();
    for (const path of ["/token", "/oauth/token", "/oauth/access_token"]) {
      const { code } = await obtainCode(signon.app, client, user.email);
      const response = await postForm(
        signon.app,
        path,
        { grant_type: "authorization_code", code, redirect_uri: client.redirectUri },
        { authorization: basicAuth(client.clientId, client.clientSecret) },
      );
      expect(response.statusCode, path).toBe(200);
    }
  });

  it("refuses a replayed code and revokes the tokens issued from it (S6)", async () => {
    const { client, user } = await setup();
    const { code } = await obtainCode(signon.app, client, user.email);
    const first = await exchangeCode(signon.app, client, code);
    const { access_token, refresh_token } = first.json<{ access_token: string; refresh_token: string }>();
    expect((await getUserJson(signon.app, access_token)).statusCode).toBe(200);

    const replay = await exchangeCode(signon.app, client, code);
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toEqual({ error: "invalid_grant", error_description: "The authorization code has already been used" });
    expect((await getUserJson(signon.app, access_token)).statusCode).toBe(401);
    expect((await refresh(signon.app, client, refresh_token)).json()).toMatchObject({ error: "invalid_grant" });
  });

  it("refuses a code after its ten minutes", async () => {
    const { client, user } = await setup();
    const { code } = await obtainCode(signon.app, client, user.email);
    signon.clock.advance(600);
    const response = await exchangeCode(signon.app, client, code);
    expect(response.json()).toEqual({ error: "invalid_grant", error_description: "The authorization code has expired" });
  });

  it("refuses a code issued to another client, without using it up", async () => {
    const { client, user } = await setup();
    const other = await createApp(signon.ctx);
    const { code } = await obtainCode(signon.app, client, user.email);
    const stolen = await exchangeCode(signon.app, { ...other, redirectUri: client.redirectUri }, code);
    expect(stolen.json()).toEqual({ error: "invalid_grant", error_description: "The authorization code is not valid" });
    expect((await exchangeCode(signon.app, client, code)).statusCode).toBe(200);
  });

  it("refuses a redirect_uri different from the authorization request's", async () => {
    const { client, user } = await setup();
    const { code } = await obtainCode(signon.app, client, user.email);
    const response = await exchangeCode(signon.app, client, code, { redirect_uri: `${client.redirectUri}/other` });
    expect(response.json()).toEqual({ error: "invalid_grant", error_description: "redirect_uri does not match the authorization request" });
  });

  it("checks the PKCE verifier (S256)", async () => {
    const { client, user } = await setup();
    const verifier = "a".repeat(50);
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const pkce = { code_challenge: challenge, code_challenge_method: "S256" };

    const { code: first } = await obtainCode(signon.app, client, user.email, pkce);
    expect((await exchangeCode(signon.app, client, first)).json()).toEqual({ error: "invalid_grant", error_description: "code_verifier is required" });
    const { code: second } = await obtainCode(signon.app, client, user.email, pkce);
    expect((await exchangeCode(signon.app, client, second, { code_verifier: "b".repeat(50) })).json()).toEqual({
      error: "invalid_grant",
      error_description: "code_verifier does not match",
    });
    const { code: third } = await obtainCode(signon.app, client, user.email, pkce);
    expect((await exchangeCode(signon.app, client, third, { code_verifier: verifier })).statusCode).toBe(200);
  });

  it("refuses a code issued before the user was suspended, saying the account cannot sign in (not that the code expired)", async () => {
    const { client, user } = await setup();
    const { code } = await obtainCode(signon.app, client, user.email);
    await suspendUser(signon.ctx, user.email, "Left the team");
    const response = await exchangeCode(signon.app, client, code);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "invalid_grant", error_description: "The user's account is suspended, so it cannot sign in" });
  });

  it("refuses a code once the user has lost signin", async () => {
    const { client, user } = await setup();
    const { code } = await obtainCode(signon.app, client, user.email);
    const { revokePermissions } = await import("../../src/applications/permissions.js");
    await revokePermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    expect((await exchangeCode(signon.app, client, code)).json()).toEqual({
      error: "invalid_grant",
      error_description: "The user may no longer sign in to this application",
    });
  });
});

describe("POST /token redirect_uri binding", () => {
  /** What omniauth-oauth2 sends as `redirect_uri`: the URL it was called back on, query included. */
  async function callbackUrl(client: TestClient, email: string): Promise<{ code: string; calledBack: string }> {
    const { code, location } = await obtainCode(signon.app, client, email);
    return { code, calledBack: location.href };
  }

  it("accepts the callback URL with the code, state and iss the authorization response added (omniauth-oauth2)", async () => {
    const { client, user } = await setup();
    const { code, calledBack } = await callbackUrl(client, user.email);
    expect(calledBack).toMatch(/\?code=[0-9a-f]{64}&state=st4te&iss=/);
    const response = await exchangeCode(signon.app, client, code, { redirect_uri: calledBack });
    expect(response.statusCode).toBe(200);
    expect((await getUserJson(signon.app, response.json<{ access_token: string }>().access_token)).statusCode).toBe(200);
  });

  it("keeps a registered URI's own query byte for byte, and binds it with the added parameters removed", async () => {
    const client = await createApp(signon.ctx, { name: "Tenanted", redirectUris: ["https://tenant.example/cb?tenant=a%20b&x"] });
    const user = await createUser(signon.ctx, { permissions: { Tenanted: ["signin"] } });
    const { code, calledBack } = await callbackUrl(client, user.email);
    expect(calledBack).toMatch(/^https:\/\/tenant\.example\/cb\?tenant=a%20b&x&code=/);
    expect((await exchangeCode(signon.app, client, code, { redirect_uri: calledBack })).statusCode).toBe(200);
  });

  it.each([
    ["another path", (url: URL) => void (url.pathname += "/other")],
    ["another host", (url: URL) => void (url.hostname = "evil.example")],
    ["another port", (url: URL) => void (url.port = "8443")],
    ["another scheme", (url: URL) => void (url.protocol = "http:")],
    ["a foreign query parameter", (url: URL) => void (url.search += "&next=%2Fadmin")],
    ["a foreign parameter instead of the response's", (url: URL) => void (url.search = "?next=1")],
  ])("refuses the callback URL with %s (invalid_grant)", async (_, change) => {
    const { client, user } = await setup();
    const { code, calledBack } = await callbackUrl(client, user.email);
    const url = new URL(calledBack);
    change(url);
    const response = await exchangeCode(signon.app, client, code, { redirect_uri: url.href });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "invalid_grant", error_description: "redirect_uri does not match the authorization request" });
  });

  it("refuses a registered URI's own query changed", async () => {
    const client = await createApp(signon.ctx, { name: "Tenanted 2", redirectUris: ["https://tenant.example/cb?tenant=a"] });
    const user = await createUser(signon.ctx, { permissions: { "Tenanted 2": ["signin"] } });
    const { code, calledBack } = await callbackUrl(client, user.email);
    const response = await exchangeCode(signon.app, client, code, { redirect_uri: calledBack.replace("tenant=a", "tenant=b") });
    expect(response.json()).toEqual({ error: "invalid_grant", error_description: "redirect_uri does not match the authorization request" });
  });
});

describe("POST /token with grant_type=refresh_token", () => {
  it("issues a new access token and a new refresh token; the old refresh token dies (S10)", async () => {
    const { client, user } = await setup();
    const { code } = await obtainCode(signon.app, client, user.email);
    const first = (await exchangeCode(signon.app, client, code)).json<{ access_token: string; refresh_token: string }>();
    const second = await refresh(signon.app, client, first.refresh_token);
    expect(second.statusCode).toBe(200);
    const rotated = second.json<{ access_token: string; refresh_token: string }>();
    expect(rotated).toEqual({
      access_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      token_type: "Bearer",
      expires_in: 7200,
      refresh_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      created_at: expect.any(Number),
    });
    expect(rotated.refresh_token).not.toBe(first.refresh_token);
    expect((await getUserJson(signon.app, rotated.access_token)).statusCode).toBe(200);
  });

  it("revokes the whole family when a used refresh token comes back (RFC 9700 §4.14.2)", async () => {
    const { client, user } = await setup();
    const { code } = await obtainCode(signon.app, client, user.email);
    const first = (await exchangeCode(signon.app, client, code)).json<{ access_token: string; refresh_token: string }>();
    const second = (await refresh(signon.app, client, first.refresh_token)).json<{ access_token: string; refresh_token: string }>();

    const reuse = await refresh(signon.app, client, first.refresh_token);
    expect(reuse.statusCode).toBe(400);
    expect(reuse.json()).toEqual({ error: "invalid_grant", error_description: "The refresh token has already been used" });
    expect((await getUserJson(signon.app, second.access_token)).statusCode).toBe(401);
    expect((await refresh(signon.app, client, second.refresh_token)).json()).toMatchObject({ error: "invalid_grant" });
  });

  it("refuses a refresh token of another client", async () => {
    const { client, user } = await setup();
    const other = await createApp(signon.ctx);
    const { code } = await obtainCode(signon.app, client, user.email);
    const tokens = (await exchangeCode(signon.app, client, code)).json<{ refresh_token: string }>();
    expect((await refresh(signon.app, other, tokens.refresh_token)).json()).toEqual({
      error: "invalid_grant",
      error_description: "The refresh token is not valid",
    });
    expect((await refresh(signon.app, client, tokens.refresh_token)).statusCode).toBe(200);
  });
});

describe("POST /token client authentication", () => {
  it("answers a wrong secret with 401 invalid_client, and a Basic challenge when Basic was used (S3)", async () => {
    const { client } = await setup();
    const inBody = await postForm(signon.app, "/token", { grant_type: "refresh_token", refresh_token: "x", client_id: client.clientId, client_secret: "wrong" });
    expect(inBody.statusCode).toBe(401);
    expect(inBody.json()).toEqual({ error: "invalid_client", error_description: "Client authentication failed" });
    expect(inBody.headers["www-authenticate"]).toBeUndefined();

    const byBasic = await postForm(signon.app, "/token", { grant_type: "refresh_token", refresh_token: "x" }, { authorization: basicAuth(client.clientId, "wrong") });
    expect(byBasic.statusCode).toBe(401);
    expect(byBasic.headers["www-authenticate"]).toBe('Basic realm="signon", charset="UTF-8"');
  });

  it("uses up no code or refresh token when the client fails: a wrong secret, a rotated one, a retired application", async () => {
    const { client, user } = await setup();
    const { code } = await obtainCode(signon.app, client, user.email);
    const wrong = { ...client, clientSecret: "wrong" };
    expect((await exchangeCode(signon.app, wrong, code)).json()).toEqual({ error: "invalid_client", error_description: "Client authentication failed" });
    const tokens = (await exchangeCode(signon.app, client, code)).json<{ refresh_token: string }>();
    expect((await refresh(signon.app, wrong, tokens.refresh_token)).statusCode).toBe(401);

    // A rotated secret is refused at once, on every instance (nothing is cached); the new one works.
    const rotated = await rotateClientSecret(signon.ctx, client.application.id, { uid: user.uid, origin: { ip: null, userAgent: null } });
    expect((await refresh(signon.app, client, tokens.refresh_token)).statusCode).toBe(401);
    const renewed = { ...client, clientSecret: rotated?.clientSecret as string };
    const next = await refresh(signon.app, renewed, tokens.refresh_token);
    expect(next.statusCode).toBe(200);

    const { code: another } = await obtainCode(signon.app, renewed, user.email);
    await retireApplication(signon.ctx, client.application.id, { uid: user.uid, origin: { ip: null, userAgent: null } });
    expect((await exchangeCode(signon.app, renewed, another)).statusCode).toBe(401);
    expect((await refresh(signon.app, renewed, next.json<{ refresh_token: string }>().refresh_token)).statusCode).toBe(401);
  });

  it("answers 429 with Retry-After after 10 failures for a client id from one address, whatever the secret, until the window ends (S15)", async () => {
    const { client } = await setup();
    const attempt = (secret: string, ip: string) =>
      signon.app.inject({
        method: "POST",
        url: "/token",
        remoteAddress: ip,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        payload: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "x", client_id: client.clientId, client_secret: secret }).toString(),
      });
    for (let i = 0; i < 10; i++) expect((await attempt("wrong", "10.0.1.1")).statusCode).toBe(401);
    const limited = await attempt(client.clientSecret, "10.0.1.1");
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBe("600");
    expect(limited.json()).toEqual({ error: "temporarily_unavailable", error_description: "Too many failed attempts; try again later" });

    signon.clock.advance(600);
    expect((await attempt(client.clientSecret, "10.0.1.1")).json()).toMatchObject({ error: "invalid_grant" });
  });

  it("counts failures per IP across client ids (S15)", async () => {
    const attempt = (clientId: string) =>
      signon.app.inject({
        method: "POST",
        url: "/token",
        remoteAddress: "192.0.2.7",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        payload: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "x", client_id: clientId, client_secret: "guess" }).toString(),
      });
    for (let i = 0; i < 10; i++) expect((await attempt(`client-${i}`)).statusCode).toBe(401);
    expect((await attempt("client-new")).statusCode).toBe(429);
  });
});
