import { createServer, type Server } from "node:http";
import { eq, sql } from "drizzle-orm";
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applications } from "../../src/db/schema.js";
import { suspendUser } from "../../src/accounts/manage-users.js";
import { revokePermissions } from "../../src/applications/permissions.js";
import { openIdSettingsOf, setOpenIdSettings } from "../../src/oidc/client-settings.js";
import { logoutRequestBuilder } from "../../src/oidc/logout-token.js";
import { PushDeliveryService } from "../../src/pushes/delivery-service.js";
import { listPushes } from "../../src/repositories/push-deliveries.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { HttpBrowser } from "../support/http-browser.js";
import { freePort, listenSignon } from "../support/listening.js";
import { openTestDatabase } from "../support/signon.js";

const backchannelLogoutEvent = "http://schemas.openid.net/event/backchannel-logout";

/**
 * An application's back-channel logout endpoint, written with `jose` as the
 * specification asks a relying party to validate a logout token (§2.6):
 * signature by a key of the provider's JWKS, `iss`, `aud`, `iat`, `exp`, the
 * `logout+jwt` type, `sub` or `sid`, the logout event and no `nonce`, and a
 * `jti` not seen before. Answers 200 for a valid token, 400 otherwise.
 */
class LogoutReceiver {
  readonly accepted: JWTPayload[] = [];
  readonly refused: string[] = [];
  private server: Server | undefined;
  private readonly seen = new Set<string>();

  constructor(
    readonly port: number,
    private readonly issuer: string,
    private readonly clientId: () => string,
  ) {}

  get uri(): string {
    return `http://127.0.0.1:${this.port}/backchannel-logout`;
  }

  async up(): Promise<void> {
    const jwks = createRemoteJWKSet(new URL(`${this.issuer}/.well-known/jwks.json`));
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        void (async () => {
          try {
            if (request.method !== "POST" || !String(request.headers["content-type"]).startsWith("application/x-www-form-urlencoded")) throw new Error("not a form post");
            const token = new URLSearchParams(Buffer.concat(chunks).toString("utf8")).get("logout_token");
            if (!token) throw new Error("no logout_token");
            const { payload } = await jwtVerify(token, jwks, {
              issuer: this.issuer,
              audience: this.clientId(),
              typ: "logout+jwt",
              algorithms: ["ES256", "RS256"],
              requiredClaims: ["iat", "exp", "jti", "events"],
              maxTokenAge: "2 minutes",
            });
            if (typeof payload.sub !== "string" && typeof payload.sid !== "string") throw new Error("neither sub nor sid");
            const events = payload.events as Record<string, unknown> | undefined;
            const event = events?.[backchannelLogoutEvent];
            if (typeof event !== "object" || event === null || Array.isArray(event)) throw new Error("no back-channel logout event");
            if ("nonce" in payload) throw new Error("a nonce");
            if (this.seen.has(payload.jti as string)) throw new Error("a jti seen before");
            this.seen.add(payload.jti as string);
            this.accepted.push(payload);
            response.writeHead(200, { "cache-control": "no-store" }).end();
          } catch (error) {
            this.refused.push((error as Error).message);
            response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: "invalid_request" }));
          }
        })();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(this.port, "127.0.0.1", resolve));
  }

  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const database = await openTestDatabase();
let server: Awaited<ReturnType<typeof listenSignon>>;
let receiver: LogoutReceiver;
let pushes: PushDeliveryService;
let client: Awaited<ReturnType<typeof createApp>>;
let config: oidc.Configuration;

beforeAll(async () => {
  server = await listenSignon(database);
  client = await createApp(server.ctx, { name: "Dashboards", redirectUris: ["http://127.0.0.1:9/callback"] });
  receiver = new LogoutReceiver(await freePort(), server.issuer, () => client.clientId);
  await receiver.up();
  // Only the OpenID Connect half: this application takes no draft-22 pushes.
  await server.ctx.db.update(applications).set({ pushEnabled: false }).where(eq(applications.id, client.application.id));
  client.application = await setOpenIdSettings(
    server.ctx,
    client.application,
    {
      ...openIdSettingsOf(client.application),
      scopes: ["openid", "email"],
      postLogoutRedirectUris: ["http://127.0.0.1:9/signed-out"],
      backchannelLogoutUri: receiver.uri,
    },
    { uid: null, origin: null },
  );
  pushes = new PushDeliveryService(server.ctx, { logoutRequest: logoutRequestBuilder(server.ctx) });
  config = await oidc.discovery(new URL(server.issuer), client.clientId, undefined, oidc.ClientSecretPost(client.clientSecret), {
    execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
  });
});
afterAll(async () => {
  await pushes.stop();
  await receiver.down();
  await server.app.close();
  await database.close();
});

/** A person signed in to the application through the code flow; returns their browser and tokens. */
async function signedIn() {
  const user = await createUser(server.ctx, { permissions: { Dashboards: ["signin"] } });
  const browser = new HttpBrowser(server.issuer);
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: client.redirectUri,
    scope: "openid email",
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    state,
  });
  const callback = await browser.authorize(url.href, user.email, defaultPassword);
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state, idTokenExpected: true });
  return { user, browser, tokens };
}

/** Delivers what is due and returns the logout tokens the receiver accepted for `uid` since `from`. */
async function deliveredLogouts(uid: string, from: number) {
  while ((await pushes.runOnce()) > 0);
  return receiver.accepted.slice(from).filter((payload) => payload.sub === uid);
}

describe("OpenID Connect logout against a listening Sign-on", () => {
  it("signs out through the end_session_endpoint (openid-client's end session URL) and posts a logout token to the application", async () => {
    const { user, browser, tokens } = await signedIn();
    const from = receiver.accepted.length;
    const endSession = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token as string,
      post_logout_redirect_uri: "http://127.0.0.1:9/signed-out",
      state: "bye",
    });
    const response = await browser.request(endSession.href);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("http://127.0.0.1:9/signed-out?state=bye");
    expect(await deliveredLogouts(user.uid, from)).toEqual([expect.objectContaining({ iss: server.issuer, aud: client.clientId, sub: user.uid })]);
    const rows = await listPushes(server.ctx.db, { status: "delivered" });
    expect(rows.some((row) => row.kind === "logout" && row.email === user.email)).toBe(true);
    expect(receiver.refused).toEqual([]);
  });

  it("posts a logout token when the person is suspended", async () => {
    const { user } = await signedIn();
    const from = receiver.accepted.length;
    await suspendUser(server.ctx, user.email, "Left");
    expect(await deliveredLogouts(user.uid, from)).toHaveLength(1);
  });

  it("posts a logout token when signin on the application is taken away", async () => {
    const { user } = await signedIn();
    const from = receiver.accepted.length;
    await revokePermissions(server.ctx, { email: user.email, application: "Dashboards", permissions: ["signin"] });
    expect(await deliveredLogouts(user.uid, from)).toHaveLength(1);
  });

  it("keeps a logout token in the outbox while the application is down, and delivers it when it is back", async () => {
    const { user } = await signedIn();
    const from = receiver.accepted.length;
    await receiver.down();
    await suspendUser(server.ctx, user.email, "Left");
    await pushes.runOnce();
    expect((await listPushes(server.ctx.db, { status: "pending" })).some((row) => row.kind === "logout" && row.email === user.email)).toBe(true);
    await receiver.up();
    // Due a second ago: the service compares with its clock's milliseconds, the database's now() has microseconds.
    await server.ctx.db.execute(sql`update signon.push_deliveries set next_attempt_at = now() - interval '1 second' where status = 'pending'`);
    expect(await deliveredLogouts(user.uid, from)).toHaveLength(1);
  });
});
