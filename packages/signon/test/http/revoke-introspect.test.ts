import { describe, expect, it } from "vitest";
import { createApp, createUser } from "../support/factories.js";
import { basicAuth, exchangeCode, getUserJson, obtainCode, postForm, refresh } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { signon } = await useTestSignon();

async function issued() {
  const client = await createApp(signon.ctx, { name: "Publisher" });
  const user = await createUser(signon.ctx, { permissions: { Publisher: ["signin"] } });
  const { code } = await obtainCode(signon.app, client, user.email);
  const tokens = (await exchangeCode(signon.app, client, code)).json<{ access_token: string; refresh_token: string }>();
  return { client, user, ...tokens };
}

describe("POST /oauth/revoke", () => {
  it("revokes an access token", async () => {
    const { client, access_token } = await issued();
    const response = await postForm(signon.app, "/oauth/revoke", { token: access_token }, { authorization: basicAuth(client.clientId, client.clientSecret) });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe("");
    expect((await getUserJson(signon.app, access_token)).statusCode).toBe(401);
  });

  it("revokes a refresh token with every token of its grant (RFC 7009 §2.1)", async () => {
    const { client, access_token, refresh_token } = await issued();
    const response = await postForm(signon.app, "/oauth/revoke", { token: refresh_token, token_type_hint: "refresh_token", client_id: client.clientId, client_secret: client.clientSecret });
    expect(response.statusCode).toBe(200);
    expect((await getUserJson(signon.app, access_token)).statusCode).toBe(401);
    expect((await refresh(signon.app, client, refresh_token)).statusCode).toBe(400);
  });

  it("answers 200 for an unknown token and leaves other clients' tokens alone", async () => {
    const { access_token } = await issued();
    const other = await createApp(signon.ctx);
    const response = await postForm(signon.app, "/oauth/revoke", { token: access_token, client_id: other.clientId, client_secret: other.clientSecret });
    expect(response.statusCode).toBe(200);
    expect((await getUserJson(signon.app, access_token)).statusCode).toBe(200);
  });

  it("needs client authentication and a token", async () => {
    const { client, access_token } = await issued();
    expect((await postForm(signon.app, "/oauth/revoke", { token: access_token })).json()).toEqual({ error: "invalid_client", error_description: "Client authentication is required" });
    expect((await postForm(signon.app, "/oauth/revoke", { client_id: client.clientId, client_secret: client.clientSecret })).json()).toEqual({
      error: "invalid_request",
      error_description: "token is required",
    });
  });
});

describe("POST /oauth/introspect", () => {
  it("describes a live token to the client it was issued to (RFC 7662)", async () => {
    const { client, user, access_token } = await issued();
    const response = await postForm(signon.app, "/oauth/introspect", { token: access_token, client_id: client.clientId, client_secret: client.clientSecret });
    const now = Math.floor(signon.clock.now().getTime() / 1000);
    expect(response.json()).toEqual({ active: true, token_type: "Bearer", client_id: client.clientId, sub: user.uid, username: user.email, exp: now + 7200, iat: now });
  });

  it("calls an expired token, another client's token or a refresh token inactive", async () => {
    const { client, access_token, refresh_token } = await issued();
    const other = await createApp(signon.ctx);
    const ask = (token: string, asker = client) => postForm(signon.app, "/oauth/introspect", { token, client_id: asker.clientId, client_secret: asker.clientSecret });
    expect((await ask(access_token, other)).json()).toEqual({ active: false });
    expect((await ask(refresh_token)).json()).toEqual({ active: false });
    signon.clock.advance(7200);
    expect((await ask(access_token)).json()).toEqual({ active: false });
  });

  it("refuses an unauthenticated caller", async () => {
    const { access_token } = await issued();
    const response = await postForm(signon.app, "/oauth/introspect", { token: access_token, client_id: "nobody", client_secret: "guess" });
    expect(response.statusCode).toBe(401);
  });
});

describe("GET /.well-known/oauth-authorization-server", () => {
  it("publishes RFC 8414 metadata", async () => {
    const response = await signon.app.inject({ method: "GET", url: "/.well-known/oauth-authorization-server" });
    expect(response.json()).toEqual({
      issuer: "http://localhost:3000",
      authorization_endpoint: "http://localhost:3000/oauth/authorize",
      token_endpoint: "http://localhost:3000/oauth/token",
      revocation_endpoint: "http://localhost:3000/oauth/revoke",
      introspection_endpoint: "http://localhost:3000/oauth/introspect",
      userinfo_endpoint: "http://localhost:3000/user.json",
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
    });
  });
});
