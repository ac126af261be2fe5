import { SignJWT, decodeProtectedHeader, generateKeyPair } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setOpenIdSettings, openIdSettingsOf } from "../../src/oidc/client-settings.js";
import { rotateSigningKeys } from "../../src/oidc/signing-keys.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { HttpBrowser } from "../support/http-browser.js";
import { startShippedSignon } from "../support/listening.js";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
let server: Awaited<ReturnType<typeof startShippedSignon>>;
let client: Awaited<ReturnType<typeof createApp>>;
let config: oidc.Configuration;
let user: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  server = await startShippedSignon(database);
  client = await createApp(server.ctx, { name: "Wiki", redirectUris: ["http://127.0.0.1:9/callback"], permissions: ["editor"] });
  await setOpenIdSettings(server.ctx, client.application, { ...openIdSettingsOf(client.application), scopes: ["openid", "profile", "email"] }, { uid: null, origin: null });
  user = await createUser(server.ctx, { permissions: { Wiki: ["signin", "editor"] } });
  config = await oidc.discovery(new URL(server.issuer), client.clientId, undefined, oidc.ClientSecretBasic(client.clientSecret), {
    execute: [oidc.allowInsecureRequests],
  });
  // Strict: ID tokens from the token endpoint are verified against the JWKS too.
  oidc.enableNonRepudiationChecks(config);
});
afterAll(async () => {
  await server.close();
  await database.close();
});

/** A code flow request with PKCE and a nonce; `browser` signs in on Sign-on's page when asked. */
async function signIn(options: { browser?: HttpBrowser; scope?: string; extra?: Record<string, string> } = {}) {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: client.redirectUri,
    scope: options.scope ?? "openid profile email",
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    nonce,
    state,
    ...options.extra,
  });
  const callback = await (options.browser ?? new HttpBrowser(server.issuer)).authorize(url.href, user.email, defaultPassword);
  return { callback, codeVerifier, nonce, state };
}

function grant(flow: Awaited<ReturnType<typeof signIn>>, overrides: { expectedNonce?: string } = {}) {
  return oidc.authorizationCodeGrant(config, flow.callback, {
    pkceCodeVerifier: flow.codeVerifier,
    expectedNonce: overrides.expectedNonce ?? flow.nonce,
    expectedState: flow.state,
    idTokenExpected: true,
  });
}

describe("openid-client (strict OpenID Connect) against a listening Sign-on", () => {
  it("discovers the provider through /.well-known/openid-configuration", () => {
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(server.issuer);
    expect(metadata.jwks_uri).toBe(`${server.issuer}/.well-known/jwks.json`);
    expect(metadata.userinfo_endpoint).toBe(`${server.issuer}/userinfo`);
    expect(metadata.id_token_signing_alg_values_supported).toEqual(["ES256", "RS256"]);
  });

  it("runs the code flow with PKCE and a nonce, validates the ID token, reads userinfo and refreshes", async () => {
    const flow = await signIn();
    const tokens = await grant(flow);
    const claims = tokens.claims();
    expect(claims).toMatchObject({ iss: server.issuer, sub: user.uid, aud: client.clientId, nonce: flow.nonce, amr: ["pwd"] });
    expect(typeof claims?.auth_time).toBe("number");
    expect(typeof claims?.at_hash).toBe("string");
    expect(decodeProtectedHeader(tokens.id_token as string).alg).toBe("ES256");

    const info = await oidc.fetchUserInfo(config, tokens.access_token, user.uid);
    expect(info).toEqual({ sub: user.uid, name: user.name, email: user.email, email_verified: true, permissions: ["editor", "signin"] });

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.claims()).toMatchObject({ sub: user.uid, auth_time: claims?.auth_time });
  });

  it("gives only the claims of the scopes asked for", async () => {
    const tokens = await grant(await signIn({ scope: "openid" }));
    expect(await oidc.fetchUserInfo(config, tokens.access_token, user.uid)).toEqual({ sub: user.uid, permissions: ["editor", "signin"] });
  });

  it("signs with RS256 for an application that chose it", async () => {
    const application = (await setOpenIdSettings(server.ctx, client.application, { ...openIdSettingsOf(client.application), scopes: ["openid", "profile", "email"], idTokenAlg: "RS256" }, { uid: null, origin: null }));
    try {
      const tokens = await grant(await signIn());
      expect(decodeProtectedHeader(tokens.id_token as string).alg).toBe("RS256");
      expect(tokens.claims()?.sub).toBe(user.uid);
    } finally {
      await setOpenIdSettings(server.ctx, application, { ...openIdSettingsOf(application), idTokenAlg: "ES256" }, { uid: null, origin: null });
    }
  });

  it("answers prompt=none with a code for a signed-in person and login_required for anyone else", async () => {
    const browser = new HttpBrowser(server.issuer);
    await grant(await signIn({ browser }));
    const silent = await signIn({ browser, extra: { prompt: "none" } });
    expect((await grant(silent)).claims()?.sub).toBe(user.uid);

    const stranger = await signIn({ extra: { prompt: "none" } });
    await expect(grant(stranger)).rejects.toMatchObject({ error: "login_required" });
  });

  it("asks a signed-in person to sign in again for prompt=login, and gives a fresh auth_time", async () => {
    const browser = new HttpBrowser(server.issuer);
    const first = (await grant(await signIn({ browser }))).claims();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: client.redirectUri,
      scope: "openid",
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      prompt: "login",
      state: "s",
    });
    const response = await browser.request(url.href);
    expect(response.status).toBe(303);
    const signInPage = await browser.request(response.headers.get("location") as string);
    expect(await signInPage.text()).toContain('action="/sign-in"');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const callback = await browser.authorize(url.href, user.email, defaultPassword);
    const again = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: "s", idTokenExpected: true });
    expect(again.claims()?.auth_time).toBeGreaterThan(first?.auth_time as number);
  });

  it("refuses an ID token whose nonce is not the one sent", async () => {
    const flow = await signIn();
    const error = (await grant(flow, { expectedNonce: oidc.randomNonce() }).catch((caught: unknown) => caught)) as Error & { cause?: { cause?: { claim?: string } } };
    expect(error).toMatchObject({ message: "unexpected JWT claim value encountered", code: "OAUTH_JWT_CLAIM_COMPARISON_FAILED" });
    expect(error.cause?.cause?.claim).toBe("nonce");
  });

  it("refuses an ID token signed with a key id the JWKS does not publish", async () => {
    const flow = await signIn();
    const { privateKey } = await generateKeyPair("ES256");
    // The token response as Sign-on sent it, with its ID token re-signed by a key Sign-on never published.
    const forging: oidc.CustomFetch = async (url, options) => {
      const response = await fetch(url, options as RequestInit);
      if (!url.endsWith("/oauth/token")) return response;
      const body = (await response.json()) as { id_token: string };
      const claims = JSON.parse(Buffer.from(body.id_token.split(".")[1] as string, "base64url").toString()) as Record<string, unknown>;
      body.id_token = await new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "not-a-signon-key" }).sign(privateKey);
      return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
    };
    const forged = await oidc.discovery(new URL(server.issuer), client.clientId, undefined, oidc.ClientSecretBasic(client.clientSecret), {
      execute: [oidc.allowInsecureRequests],
    });
    forged[oidc.customFetch] = forging;
    oidc.enableNonRepudiationChecks(forged);
    await expect(
      oidc.authorizationCodeGrant(forged, flow.callback, { pkceCodeVerifier: flow.codeVerifier, expectedNonce: flow.nonce, expectedState: flow.state, idTokenExpected: true }),
    ).rejects.toThrow(/no applicable keys found/);
  });
  // Last: after it, Sign-on signs with keys the other tests' client has not fetched yet.
  it("sees a key rotation through the JWKS: the new key is fetched, the old one stays published", async () => {
    const before = await grant(await signIn());
    const oldKid = decodeProtectedHeader(before.id_token as string).kid;
    const saved = oidc.getJwksCache(config);
    expect(saved?.jwks?.keys?.map((key) => key.kid)).toContain(oldKid);
    // Active at once (a rotation's new key normally signs only a minute after it is published).
    const [newKey] = await rotateSigningKeys(server.ctx, "command", 0);
    // A running server reads the key it signs with at most once a minute; started again (a rolling restart), at once.
    await server.restart();
    // A client process started again with the JWKS it kept from a minute ago (getJwksCache / setJwksCache):
    // on a key id new to it, it fetches the JWKS again.
    const restarted = await oidc.discovery(new URL(server.issuer), client.clientId, undefined, oidc.ClientSecretBasic(client.clientSecret), {
      execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
    });
    if (!saved) throw new Error("the client kept no JWKS");
    oidc.setJwksCache(restarted, { ...saved, uat: saved.uat - 61 });
    const flow = await signIn();
    const after = await oidc.authorizationCodeGrant(restarted, flow.callback, {
      pkceCodeVerifier: flow.codeVerifier,
      expectedNonce: flow.nonce,
      expectedState: flow.state,
      idTokenExpected: true,
    });
    expect(decodeProtectedHeader(after.id_token as string).kid).toBe(newKey?.kid);
    expect(oidc.getJwksCache(restarted)?.jwks?.keys?.map((key) => key.kid)).toEqual(expect.arrayContaining([oldKid, newKey?.kid]));
  });
});
