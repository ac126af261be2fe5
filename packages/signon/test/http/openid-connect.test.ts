import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { beforeEach, describe, expect, it } from "vitest";
import { openIdSettingsOf, setOpenIdSettings } from "../../src/oidc/client-settings.js";
import { ensureSigningKeys, forgetCachedSigningKeys, rotateSigningKeys, rotateSigningKeysIfDue } from "../../src/oidc/signing-keys.js";
import { signedInAs } from "../web/users-support.js";
import { createApp, createUser } from "../support/factories.js";
import { authorizeUrl, exchangeCode, obtainCode, postForm, refresh } from "../support/flow.js";
import { InjectBrowser } from "../support/browser.js";
import { useTestSignon } from "../support/signon.js";

const { signon } = await useTestSignon();
const issuer = "http://localhost:3000";
// Each test starts on an empty database: the keys the app held are gone with it.
beforeEach(() => forgetCachedSigningKeys(signon.ctx));

async function oidcClient(settings: Partial<Parameters<typeof setOpenIdSettings>[2]> = {}) {
  const client = await createApp(signon.ctx);
  const application = await setOpenIdSettings(
    signon.ctx,
    client.application,
    {
      ...openIdSettingsOf(client.application),
      scopes: ["openid", "profile", "email"],
      postLogoutRedirectUris: ["https://wiki.example/signed-out"],
      ...settings,
    },
    { uid: null, origin: null },
  );
  const user = await createUser(signon.ctx, { permissions: { [application.name]: ["signin"] } });
  return { client: { ...client, application }, user };
}

async function idTokenFor(extra: Record<string, string> = { scope: "openid email", nonce: "n-0S6_WzA2Mj" }) {
  const { client, user } = await oidcClient();
  const { code, browser } = await obtainCode(signon.app, client, user.email, extra);
  const response = await exchangeCode(signon.app, client, code);
  expect(response.statusCode).toBe(200);
  return { client, user, browser, tokens: response.json<{ access_token: string; refresh_token: string; id_token: string; scope: string }>() };
}

async function jwks() {
  return createLocalJWKSet((await signon.app.inject({ method: "GET", url: "/.well-known/jwks.json" })).json());
}

describe("GET /.well-known/openid-configuration", () => {
  it("publishes Discovery 1.0 metadata that agrees with the RFC 8414 metadata", async () => {
    const discovery = (await signon.app.inject({ method: "GET", url: "/.well-known/openid-configuration" })).json<Record<string, unknown>>();
    const oauth = (await signon.app.inject({ method: "GET", url: "/.well-known/oauth-authorization-server" })).json<Record<string, unknown>>();
    const { userinfo_endpoint: _draft22UserDetails, ...shared } = oauth;
    expect(discovery).toMatchObject(shared);
    expect(discovery).toMatchObject({
      issuer,
      userinfo_endpoint: `${issuer}/userinfo`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      end_session_endpoint: `${issuer}/end-session`,
      scopes_supported: ["openid", "profile", "email"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["ES256", "RS256"],
      backchannel_logout_supported: true,
    });
  });
});

describe("GET /.well-known/jwks.json", () => {
  it("publishes one ES256 and one RS256 public key, without private parts", async () => {
    const { keys } = (await signon.app.inject({ method: "GET", url: "/.well-known/jwks.json" })).json<{ keys: Record<string, string>[] }>();
    expect(keys.map((key) => key.alg).sort()).toEqual(["ES256", "RS256"]);
    for (const key of keys) {
      expect(key).toMatchObject({ use: "sig" });
      expect(key.d).toBeUndefined();
    }
  });
});

describe("POST /token with scope openid", () => {
  it("adds a signed ID token with the Core claims", async () => {
    const { client, user, tokens } = await idTokenFor();
    const { payload, protectedHeader } = await jwtVerify(tokens.id_token, await jwks(), { issuer, audience: client.clientId, currentDate: signon.clock.now() });
    expect(protectedHeader.alg).toBe("ES256");
    const now = Math.floor(signon.clock.now().getTime() / 1000);
    expect(payload).toMatchObject({ sub: user.uid, nonce: "n-0S6_WzA2Mj", amr: ["pwd"], iat: now, exp: now + 3600, auth_time: now });
    expect(tokens.scope).toBe("openid email");
  });

  it("sends no ID token, nor scope, for a request without openid: draft-22 clients see what they saw", async () => {
    const { client, user } = await oidcClient();
    const { code } = await obtainCode(signon.app, client, user.email);
    expect(Object.keys((await exchangeCode(signon.app, client, code)).json()).sort()).toEqual(["access_token", "created_at", "expires_in", "refresh_token", "token_type"]);
  });

  it("issues a new ID token on refresh, with the first auth_time and no nonce", async () => {
    const { client, tokens } = await idTokenFor();
    signon.clock.advance(60);
    const refreshed = (await refresh(signon.app, client, tokens.refresh_token)).json<{ id_token: string }>();
    const first = decodeJwt(tokens.id_token);
    const second = decodeJwt(refreshed.id_token);
    expect(second.auth_time).toBe(first.auth_time);
    expect(second.iat).toBe((first.iat as number) + 60);
    expect(second.nonce).toBeUndefined();
  });
});

describe("GET /oauth/authorize with scope openid", () => {
  it("redirects invalid_scope to an application not registered for OpenID Connect", async () => {
    const client = await createApp(signon.ctx);
    const response = await signon.app.inject({
      method: "GET",
      url: authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s", scope: "openid" }),
    });
    expect(response.statusCode).toBe(302);
    expect(new URL(response.headers.location as string).searchParams.get("error")).toBe("invalid_scope");
  });

  it("answers prompt=none without a session with login_required at the redirect URI (Core §3.1.2.6)", async () => {
    const { client } = await oidcClient();
    const response = await signon.app.inject({
      method: "GET",
      url: authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s", scope: "openid", prompt: "none" }),
    });
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(client.redirectUri);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({ error: "login_required", state: "s", iss: issuer });
  });

  it("refuses prompt=none with other values, and a bad max_age", async () => {
    const { client } = await oidcClient();
    for (const extra of [{ prompt: "none login" }, { max_age: "-1" }, { max_age: "soon" }]) {
      const response = await signon.app.inject({
        method: "GET",
        url: authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s", scope: "openid", ...extra }),
      });
      expect(new URL(response.headers.location as string).searchParams.get("error")).toBe("invalid_request");
    }
  });

  it("fills the sign-in form with login_hint", async () => {
    const { client } = await oidcClient();
    const browser = new InjectBrowser(signon.app);
    const start = await browser.get(
      authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s", scope: "openid", login_hint: "ada@example.org" }),
    );
    const page = await browser.get(start.headers.location as string);
    expect(page.body).toContain('value="ada@example.org"');
  });

  it("asks for a new sign-in when the session is older than max_age, and gives a code at once when it is not", async () => {
    const { client, user, browser } = await idTokenFor();
    const url = (maxAge: string) =>
      authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s", scope: "openid", max_age: maxAge });
    signon.clock.advance(120);
    expect((await browser.get(url("600"))).statusCode).toBe(302);
    const again = await browser.get(url("60"));
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toMatch(/^\/sign-in\?/);
    const signedIn = await browser.signIn(again.headers.location as string, user.email, "correct horse battery staple");
    const back = await browser.get(signedIn.headers.location as string);
    expect(back.statusCode).toBe(302);
    const code = new URL(back.headers.location as string).searchParams.get("code") as string;
    const idToken = decodeJwt((await exchangeCode(signon.app, client, code)).json<{ id_token: string }>().id_token);
    expect(idToken.auth_time).toBe(Math.floor(signon.clock.now().getTime() / 1000));
  });
});

describe("GET and POST /userinfo", () => {
  it("answers the claims of the granted scopes and the application's permissions", async () => {
    const { user, tokens } = await idTokenFor();
    const viaGet = await signon.app.inject({ method: "GET", url: "/userinfo", headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(viaGet.json()).toEqual({ sub: user.uid, email: user.email, email_verified: true, permissions: ["signin"] });
    const viaPost = await postForm(signon.app, "/userinfo", { access_token: tokens.access_token });
    expect(viaPost.json()).toEqual(viaGet.json());
  });

  it("answers a POST with the token in the Authorization header and no body (Core §5.3.1)", async () => {
    const { user, tokens } = await idTokenFor();
    const response = await signon.app.inject({ method: "POST", url: "/userinfo", headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ sub: user.uid, email: user.email, email_verified: true, permissions: ["signin"] });
  });

  it("refuses a token issued without openid (insufficient_scope) and an unknown one (invalid_token)", async () => {
    const { client, user } = await oidcClient();
    const { code } = await obtainCode(signon.app, client, user.email);
    const plain = (await exchangeCode(signon.app, client, code)).json<{ access_token: string }>();
    const refused = await signon.app.inject({ method: "GET", url: "/userinfo", headers: { authorization: `Bearer ${plain.access_token}` } });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers["www-authenticate"]).toContain('error="insufficient_scope"');
    const unknown = await signon.app.inject({ method: "GET", url: "/userinfo", headers: { authorization: `Bearer ${"0".repeat(64)}` } });
    expect(unknown.statusCode).toBe(401);
  });
});

describe("GET /end-session", () => {
  const endSession = (browser: InjectBrowser, parameters: Record<string, string>) => browser.get(`/end-session?${new URLSearchParams(parameters).toString()}`);

  it("signs out the person the id_token_hint names and goes back to the registered URI with state", async () => {
    const { tokens, browser } = await idTokenFor();
    const response = await endSession(browser, { id_token_hint: tokens.id_token, post_logout_redirect_uri: "https://wiki.example/signed-out", state: "xyz" });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("https://wiki.example/signed-out?state=xyz");
    expect((await browser.get("/account")).statusCode).toBe(303);
  });

  it("refuses a post_logout_redirect_uri the application did not register, and keeps the session", async () => {
    const { tokens, browser } = await idTokenFor();
    const response = await endSession(browser, { id_token_hint: tokens.id_token, post_logout_redirect_uri: "https://evil.example/" });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain("not registered");
    expect((await browser.get("/account")).statusCode).toBe(200);
  });

  it("accepts an id_token_hint expired a little while ago (RP-Initiated Logout §4)", async () => {
    const { tokens, browser } = await idTokenFor();
    signon.clock.advance(3600 + 60);
    const response = await endSession(browser, { id_token_hint: tokens.id_token, post_logout_redirect_uri: "https://wiki.example/signed-out" });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("https://wiki.example/signed-out");
  });

  it("refuses an id_token_hint expired longer ago than a session lasts", async () => {
    const { tokens, browser } = await idTokenFor();
    signon.clock.advance(3600 + 12 * 3600 + 60);
    const response = await endSession(browser, { id_token_hint: tokens.id_token, post_logout_redirect_uri: "https://wiki.example/signed-out" });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain("expired too long ago");
  });

  it("refuses an id_token_hint signed with a key it does not publish", async () => {
    const { tokens, browser } = await idTokenFor();
    const { privateKey } = await generateKeyPair("ES256");
    const forged = await new SignJWT(decodeJwt(tokens.id_token)).setProtectedHeader({ alg: "ES256", kid: "unknown-kid" }).sign(privateKey);
    expect(decodeProtectedHeader(forged).kid).toBe("unknown-kid");
    const response = await endSession(browser, { id_token_hint: forged });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain("not signed with a key of this server");
  });

  it("asks before signing out when there is no hint, and signs out on confirmation", async () => {
    const { client, browser } = await idTokenFor();
    const page = await endSession(browser, { client_id: client.clientId, post_logout_redirect_uri: "https://wiki.example/signed-out" });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`${client.application.name} asks to sign you out`);
    const confirmed = await browser.submit(
      `/end-session?${new URLSearchParams({ client_id: client.clientId, post_logout_redirect_uri: "https://wiki.example/signed-out" }).toString()}`,
      "/end-session/confirm",
      { confirm: "yes", client_id: client.clientId, post_logout_redirect_uri: "https://wiki.example/signed-out" },
    );
    expect(confirmed.statusCode).toBe(303);
    expect(confirmed.headers.location).toBe("https://wiki.example/signed-out");
    expect((await browser.get("/account")).statusCode).toBe(303);
  });
});

describe("signing key rotation", () => {
  it("publishes the new keys at once and signs with them a minute later; the old ones stay published", async () => {
    const { client, user, tokens } = await idTokenFor();
    const oldKid = decodeProtectedHeader(tokens.id_token).kid;
    const [newKey] = await rotateSigningKeys(signon.ctx, "command");
    const published = () => signon.app.inject({ method: "GET", url: "/.well-known/jwks.json" }).then((response) => response.json<{ keys: { kid: string }[] }>().keys.map((key) => key.kid));
    expect(await published()).toEqual(expect.arrayContaining([oldKid, newKey?.kid]));
    const kidNow = async () => {
      const { code } = await obtainCode(signon.app, client, user.email, { scope: "openid" });
      return decodeProtectedHeader((await exchangeCode(signon.app, client, code)).json<{ id_token: string }>().id_token).kid;
    };
    expect(await kidNow()).toBe(oldKid);
    signon.clock.advance(61);
    expect(await kidNow()).toBe(newKey?.kid);
    // Its last ID token (signed just before the new key took over) expires an hour on; the key is published five minutes more.
    signon.clock.advance(3600 + 200);
    expect(await published()).toContain(oldKid);
    signon.clock.advance(200);
    expect(await published()).not.toContain(oldKid);
  });


  it("replaces keys older than SIGNON_SIGNING_KEY_ROTATION_DAYS (90 by default), and only those", async () => {
    await ensureSigningKeys(signon.ctx);
    signon.clock.advance(89 * 86_400);
    expect(await rotateSigningKeysIfDue(signon.ctx)).toBe(false);
    signon.clock.advance(2 * 86_400);
    expect(await rotateSigningKeysIfDue(signon.ctx)).toBe(true);
    expect(await rotateSigningKeysIfDue(signon.ctx)).toBe(false);
    const { keys } = (await signon.app.inject({ method: "GET", url: "/.well-known/jwks.json" })).json<{ keys: unknown[] }>();
    expect(keys).toHaveLength(4);
  });
});

describe("POST /applications/:id/openid-connect", () => {
  it("registers the application for OpenID Connect from its page, and refuses a bad logout URI with 400", async () => {
    const { browser } = await signedInAs(signon.app, signon.ctx, "superadmin");
    const { application } = await createApp(signon.ctx);
    const saved = await browser.submit(`/applications/${application.id}`, `/applications/${application.id}/openid-connect`, {
      scope_openid: "yes",
      scope_email: "yes",
      id_token_alg: "RS256",
      post_logout_redirect_uris: "https://app.example/bye\nhttps://app.example/again",
      backchannel_logout_uri: "https://app.example/backchannel",
    });
    expect(saved.statusCode).toBe(303);
    const page = await browser.get(`/applications/${application.id}`);
    expect(page.body).toContain("OpenID Connect settings saved");
    expect(page.body).toContain('id="scope_email" name="scope_email" value="yes" checked');
    const refused = await browser.submit(`/applications/${application.id}`, `/applications/${application.id}/openid-connect`, {
      scope_openid: "yes",
      backchannel_logout_uri: "javascript:alert(1)",
    });
    expect(refused.statusCode).toBe(400);
  });
});
