import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { createDrizzle, createPool } from "@tessera/db";
import { FaultProxy } from "@tessera/db/testing";
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from "fastify";
import { decodeJwt } from "jose";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import signonApp, { signonServerOptions } from "../../src/app.js";
import * as schema from "../../src/db/schema.js";
import { openIdSettingsOf, setOpenIdSettings } from "../../src/oidc/client-settings.js";
import { InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { exchangeCode, obtainCode, type TestClient } from "../support/flow.js";
import { buildTestSignon, openTestDatabase, testConfig } from "../support/signon.js";
import { SoftAuthenticator } from "../support/soft-authenticator.js";

// The OpenID Connect and passkey routes on a pool that reaches its database through a proxy, which refuses
// connections (the database is down) or cuts them in the middle of a request (the network fails, a server restarts).
const database = await openTestDatabase();
const direct = await buildTestSignon(database);
const proxy = await FaultProxy.start(database.url);
let pool: pg.Pool;
let app: FastifyInstance;

const unavailable = { error: "temporarily_unavailable", error_description: "Sign-on cannot reach its database; try again shortly" };

beforeAll(async () => {
  pool = createPool({ url: proxy.urlFor(database.url), max: 4, connectionTimeoutMs: 2000 });
  const config = { ...testConfig(), preparedStatements: true };
  app = Fastify(signonServerOptions(config, false));
  await app.register(signonApp, { config, db: createDrizzle(pool, schema), pool, now: direct.clock.now });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await pool?.end();
  await proxy.close();
  await direct.app.close();
  await database.close();
});

function csrfOf(html: string): string {
  const token = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  if (token === undefined) throw new Error(`no CSRF token in:\n${html}`);
  return token;
}

/** An OpenID Connect client with scopes openid, profile and email, and a person allowed to sign in to it. */
async function openIdClient(name: string): Promise<{ client: TestClient; email: string }> {
  const client = await createApp(direct.ctx, { name });
  const application = await setOpenIdSettings(direct.ctx, client.application, { ...openIdSettingsOf(client.application), scopes: ["openid", "profile", "email"] }, { uid: null, origin: null });
  const user = await createUser(direct.ctx, { permissions: { [application.name]: ["signin"] } });
  return { client, email: user.email };
}

async function openIdCode(client: TestClient, email: string): Promise<string> {
  return (await obtainCode(app, client, email, { scope: "openid profile email", nonce: "n-0S6_WzA2Mj" })).code;
}

function userinfo(accessToken: string, method: "GET" | "POST" = "GET"): Promise<LightMyRequestResponse> {
  return app.inject({ method, url: "/userinfo", headers: { authorization: `Bearer ${accessToken}` } });
}

/** A person with a passkey added through the account page (through the proxy, while it forwards). */
async function personWithPasskey(): Promise<SoftAuthenticator> {
  const user = await createUser(direct.ctx);
  const browser = await signedInBrowser(app, user.email, defaultPassword);
  const page = await browser.get("/account/passkeys");
  const options = await browser.postJson("/account/passkeys/options", { _csrf: csrfOf(page.body) });
  expect(options.statusCode).toBe(200);
  const authenticator = new SoftAuthenticator();
  const answer = authenticator.register(options.json<PublicKeyCredentialCreationOptionsJSON>());
  expect((await browser.submit("/account/passkeys", "/account/passkeys", { name: "Laptop", response: JSON.stringify(answer) })).statusCode).toBe(303);
  return authenticator;
}

/** A browser on the sign-in page that asked for a passwordless challenge, and the CSRF token to post its answer with. */
async function passwordlessCeremony(): Promise<{ browser: InjectBrowser; options: PublicKeyCredentialRequestOptionsJSON; csrf: string }> {
  const browser = new InjectBrowser(app);
  const page = await browser.get("/sign-in");
  const csrf = csrfOf(page.body);
  const options = await browser.postJson("/sign-in/passkey/options", { _csrf: csrf });
  expect(options.statusCode).toBe(200);
  return { browser, options: options.json<PublicKeyCredentialRequestOptionsJSON>(), csrf };
}

function postPasskeyAnswer(browser: InjectBrowser, csrf: string, answer: string): Promise<LightMyRequestResponse> {
  return browser.postForm("/sign-in/passkey", { _csrf: csrf, response: answer, return_to: "/account" });
}

function expectUnavailableJson(response: LightMyRequestResponse): void {
  expect(response.statusCode).toBe(503);
  expect(response.headers["retry-after"]).toBe("5");
  expect(response.headers["cache-control"]).toBe("no-store");
  expect(response.json()).toEqual(unavailable);
}

function expectUnavailablePage(response: LightMyRequestResponse): void {
  expect(response.statusCode).toBe(503);
  expect(response.headers["retry-after"]).toBe("5");
  expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
  expect(response.body).toContain("Temporarily unavailable");
}

/**
 * Sends `request` while the proxy holds every byte back, and cuts every
 * connection until it is answered: wherever the request is (checking out a
 * connection, its first statement, the middle of a transaction), its
 * connection dies under it. Then lets bytes through again.
 */
async function cutDuring(request: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  proxy.stall();
  let answered = false;
  const pending = request().finally(() => {
    answered = true;
  });
  try {
    // Bounded: a request that would never end fails the test on its timeout instead of looping for ever.
    for (let round = 0; round < 400 && !answered; round++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      proxy.cutAll();
    }
    return await pending;
  } finally {
    proxy.resume();
  }
}

describe("OpenID Connect and passkey sign-in while the database refuses connections", () => {
  let client: TestClient;
  let code: string;
  let accessToken: string;
  let authenticator: SoftAuthenticator;
  let ceremony: Awaited<ReturnType<typeof passwordlessCeremony>>;
  let answer: string;

  beforeAll(async () => {
    const oidc = await openIdClient("Outage OIDC");
    client = oidc.client;
    const first = await exchangeCode(app, client, await openIdCode(client, oidc.email));
    expect(first.statusCode).toBe(200);
    accessToken = first.json<{ access_token: string }>().access_token;
    code = await openIdCode(client, oidc.email);
    authenticator = await personWithPasskey();
    ceremony = await passwordlessCeremony();
    answer = JSON.stringify(authenticator.authenticate(ceremony.options));
    proxy.cutAll();
    await proxy.refuse();
  });

  it("answers POST /token with scope openid 503 temporarily_unavailable with Retry-After", async () => {
    expectUnavailableJson(await exchangeCode(app, client, code));
  });

  it("answers GET and POST /userinfo 503 in the same shape", async () => {
    expectUnavailableJson(await userinfo(accessToken, "GET"));
    expectUnavailableJson(await userinfo(accessToken, "POST"));
  });

  it("answers POST /sign-in/passkey/options 503 in the same shape", async () => {
    expectUnavailableJson(await ceremony.browser.postJson("/sign-in/passkey/options", { _csrf: ceremony.csrf }));
  });

  it("answers POST /sign-in/passkey 503 with the plain temporarily-unavailable page, signing nobody in", async () => {
    const response = await postPasskeyAnswer(ceremony.browser, ceremony.csrf, answer);
    expectUnavailablePage(response);
    expect(ceremony.browser.cookie("signon_session")).toBeUndefined();
  });

  describe("and once it accepts them again", () => {
    beforeAll(() => proxy.accept());

    it("exchanges the code for tokens with an ID token, without a restart", async () => {
      const response = await exchangeCode(app, client, code);
      expect(response.statusCode).toBe(200);
      const tokens = response.json<{ id_token: string }>();
      expect(decodeJwt(tokens.id_token)).toMatchObject({ aud: client.clientId, nonce: "n-0S6_WzA2Mj", amr: ["pwd"] });
    });

    it("answers /userinfo with the person's claims", async () => {
      const response = await userinfo(accessToken);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ email_verified: true, permissions: ["signin"] });
    });

    it("signs in with the passkey's answer to the challenge it could not check before", async () => {
      const response = await postPasskeyAnswer(ceremony.browser, ceremony.csrf, answer);
      expect(response.statusCode).toBe(303);
      expect(response.headers.location).toBe("/account");
      expect((await ceremony.browser.get("/account")).statusCode).toBe(200);
    });
  });
});

describe("OpenID Connect and passkey sign-in when the connection is cut in the middle of a request", () => {
  let client: TestClient;
  let email: string;
  let authenticator: SoftAuthenticator;

  beforeAll(async () => {
    ({ client, email } = await openIdClient("Cut OIDC"));
    authenticator = await personWithPasskey();
  });

  it("answers POST /token with scope openid 503, then a new sign-in's code is exchanged", async () => {
    const code = await openIdCode(client, email);
    expectUnavailableJson(await cutDuring(() => exchangeCode(app, client, code)));
    // A code whose exchange answered 503 is not sent again (docs/operations.md): the client signs in anew.
    const again = await exchangeCode(app, client, await openIdCode(client, email));
    expect(again.statusCode).toBe(200);
    expect(again.json()).toHaveProperty("id_token");
  });

  it("answers /userinfo 503, then the claims", async () => {
    const tokens = (await exchangeCode(app, client, await openIdCode(client, email))).json<{ access_token: string }>();
    expectUnavailableJson(await cutDuring(() => userinfo(tokens.access_token)));
    expectUnavailableJson(await cutDuring(() => userinfo(tokens.access_token, "POST")));
    const response = await userinfo(tokens.access_token);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ email, permissions: ["signin"] });
  });

  it("answers POST /sign-in/passkey 503, then the same answer signs in", async () => {
    const ceremony = await passwordlessCeremony();
    const answer = JSON.stringify(authenticator.authenticate(ceremony.options));
    expectUnavailablePage(await cutDuring(() => postPasskeyAnswer(ceremony.browser, ceremony.csrf, answer)));
    expect(ceremony.browser.cookie("signon_session")).toBeUndefined();
    const response = await postPasskeyAnswer(ceremony.browser, ceremony.csrf, answer);
    expect(response.statusCode).toBe(303);
    expect((await ceremony.browser.get("/account")).statusCode).toBe(200);
  });
});
