import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { HttpBrowser } from "../support/http-browser.js";
import { startShippedSignon } from "../support/listening.js";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
let server: Awaited<ReturnType<typeof startShippedSignon>>;
let as: oauth.AuthorizationServer;
let client: Awaited<ReturnType<typeof createApp>>;
let email: string;
const insecure = { [oauth.allowInsecureRequests]: true };

beforeAll(async () => {
  server = await startShippedSignon(database);
  const issuer = new URL(server.issuer);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }));
  client = await createApp(server.ctx, { name: "Strict client", redirectUris: ["http://127.0.0.1:9/callback"] });
  email = (await createUser(server.ctx, { permissions: { "Strict client": ["signin"] } })).email;
});
afterAll(async () => {
  await server.close();
  await database.close();
});

/** The front-channel half: a PKCE authorization request, signed in through the HTML form. */
async function authorize() {
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint as string);
  url.search = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    response_type: "code",
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
  }).toString();
  const callback = await new HttpBrowser(server.issuer).authorize(url.href, email, defaultPassword);
  const params = oauth.validateAuthResponse(as, { client_id: client.clientId }, callback, state);
  return { params, codeVerifier };
}

async function exchange(params: URLSearchParams, codeVerifier: string, auth = oauth.ClientSecretPost(client.clientSecret)) {
  const response = await oauth.authorizationCodeGrantRequest(as, { client_id: client.clientId }, auth, params, client.redirectUri, codeVerifier, insecure);
  return oauth.processAuthorizationCodeResponse(as, { client_id: client.clientId }, response);
}

describe("oauth4webapi against a listening Sign-on", () => {
  it("discovers the server through RFC 8414 metadata", () => {
    expect(as.issuer).toBe(server.issuer);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
  });

  it("runs the full code flow with PKCE, reads /user.json, and refreshes", async () => {
    const { params, codeVerifier } = await authorize();
    const tokens = await exchange(params, codeVerifier, oauth.ClientSecretBasic(client.clientSecret));
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.expires_in).toBe(7200);

    const userResponse = await oauth.protectedResourceRequest(tokens.access_token, "GET", new URL("/user.json", server.issuer), undefined, undefined, insecure);
    expect(userResponse.status).toBe(200);
    expect(((await userResponse.json()) as { user: { email: string; permissions: string[] } }).user).toMatchObject({ email, permissions: ["signin"] });

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      { client_id: client.clientId },
      await oauth.refreshTokenGrantRequest(as, { client_id: client.clientId }, oauth.ClientSecretPost(client.clientSecret), tokens.refresh_token as string, insecure),
    );
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
  });

  it("gets invalid_grant for a replayed code", async () => {
    const { params, codeVerifier } = await authorize();
    await exchange(params, codeVerifier);
    await expect(exchange(params, codeVerifier)).rejects.toMatchObject({ error: "invalid_grant", status: 400 });
  });

  it("gets invalid_grant for a reused refresh token", async () => {
    const { params, codeVerifier } = await authorize();
    const tokens = await exchange(params, codeVerifier);
    const refreshWith = async (token: string) =>
      oauth.processRefreshTokenResponse(
        as,
        { client_id: client.clientId },
        await oauth.refreshTokenGrantRequest(as, { client_id: client.clientId }, oauth.ClientSecretPost(client.clientSecret), token, insecure),
      );
    await refreshWith(tokens.refresh_token as string);
    await expect(refreshWith(tokens.refresh_token as string)).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("gets invalid_client for a wrong secret", async () => {
    const { params, codeVerifier } = await authorize();
    await expect(exchange(params, codeVerifier, oauth.ClientSecretPost("wrong"))).rejects.toMatchObject({ error: "invalid_client", status: 401 });
  });
});
