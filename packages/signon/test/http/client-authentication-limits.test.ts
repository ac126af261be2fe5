import { eq } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { auditEvents } from "../../src/db/schema.js";
import { signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import type { TestClient } from "../support/flow.js";
import { buildTestSignon, openTestDatabase, testConfig } from "../support/signon.js";
import { textOf } from "../web/account-support.js";

const database = await openTestDatabase();
const lines: string[] = [];
const logger = { level: "warn", stream: { write: (line: string) => void lines.push(line) } };
// Two instances on one database, as behind a load balancer; the second behind a trusted proxy.
const first = await buildTestSignon(database, testConfig(), logger);
const second = await buildTestSignon(database, testConfig({ SIGNON_TRUST_PROXY: "true" }), logger);
afterAll(async () => {
  await first.app.close();
  await second.app.close();
  await database.close();
});
beforeEach(async () => {
  await database.reset();
  lines.length = 0;
  second.clock.set(first.clock.now());
});

/** A refresh with a made-up token: `invalid_grant` (400) means the client got through authentication. */
function tokenRequest(app: FastifyInstance, client: { clientId: string }, secret: string, from: { remoteAddress: string; forwardedFor?: string }) {
  return app.inject({
    method: "POST",
    url: "/token",
    remoteAddress: from.remoteAddress,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(from.forwardedFor === undefined ? {} : { "x-forwarded-for": from.forwardedFor }),
    },
    payload: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "x", client_id: client.clientId, client_secret: secret }).toString(),
  });
}

const authenticated = { error: "invalid_grant", error_description: "The refresh token is not valid" };
const limited = { error: "temporarily_unavailable", error_description: "Too many failed attempts; try again later" };

async function publisher(): Promise<TestClient> {
  return createApp(first.ctx, { name: "Publisher" });
}

describe("POST /token client authentication limits (S15)", () => {
  it("limits an attacker's address for the client after 10 failures, even with the right secret, while the real client keeps working from its own address", async () => {
    const client = await publisher();
    for (let i = 0; i < 10; i++) expect((await tokenRequest(first.app, client, "guess", { remoteAddress: "203.0.113.9" })).statusCode).toBe(401);

    const attacker = await tokenRequest(first.app, client, client.clientSecret, { remoteAddress: "203.0.113.9" });
    expect(attacker.statusCode).toBe(429);
    expect(attacker.headers["retry-after"]).toBe("600");
    expect(attacker.json()).toEqual(limited);

    const real = await tokenRequest(first.app, client, client.clientSecret, { remoteAddress: "198.51.100.20" });
    expect(real.statusCode).toBe(400);
    expect(real.json()).toEqual(authenticated);

    first.clock.advance(600);
    expect((await tokenRequest(first.app, client, client.clientSecret, { remoteAddress: "203.0.113.9" })).json()).toEqual(authenticated);
  });

  it("never refuses the real client because of failures for its client id from other addresses", async () => {
    const client = await publisher();
    for (let i = 0; i < 30; i++) expect((await tokenRequest(first.app, client, "guess", { remoteAddress: `10.0.0.${i + 1}` })).statusCode).toBe(401);
    expect((await tokenRequest(first.app, client, client.clientSecret, { remoteAddress: "198.51.100.20" })).json()).toEqual(authenticated);
  });

  it("limits an address for every client after 10 failures across client ids", async () => {
    const client = await publisher();
    for (let i = 0; i < 10; i++) {
      expect((await tokenRequest(first.app, { clientId: `made-up-${i}` }, "guess", { remoteAddress: "192.0.2.7" })).statusCode).toBe(401);
    }
    expect((await tokenRequest(first.app, client, client.clientSecret, { remoteAddress: "192.0.2.7" })).statusCode).toBe(429);
    expect((await tokenRequest(first.app, client, client.clientSecret, { remoteAddress: "192.0.2.8" })).json()).toEqual(authenticated);
  });

  it("holds across two instances on one database", async () => {
    const client = await publisher();
    for (let i = 0; i < 5; i++) {
      expect((await tokenRequest(first.app, client, "guess", { remoteAddress: "203.0.113.9" })).statusCode).toBe(401);
      expect((await tokenRequest(second.app, client, "guess", { remoteAddress: "10.1.1.1", forwardedFor: "203.0.113.9" })).statusCode).toBe(401);
    }
    expect((await tokenRequest(first.app, client, client.clientSecret, { remoteAddress: "203.0.113.9" })).statusCode).toBe(429);
    expect((await tokenRequest(second.app, client, client.clientSecret, { remoteAddress: "10.1.1.1", forwardedFor: "203.0.113.9" })).statusCode).toBe(429);
    expect((await tokenRequest(second.app, client, client.clientSecret, { remoteAddress: "10.1.1.1", forwardedFor: "198.51.100.20" })).json()).toEqual(authenticated);
  });

  it("takes the source address behind the trusted proxy from what the proxy adds, not from what a client puts in X-Forwarded-For", async () => {
    const client = await publisher();
    for (let i = 0; i < 10; i++) {
      const forged = `${10 + i}.${i}.0.1, 203.0.113.9`;
      expect((await tokenRequest(second.app, client, "guess", { remoteAddress: "10.1.1.1", forwardedFor: forged })).statusCode).toBe(401);
    }
    const stillLimited = await tokenRequest(second.app, client, client.clientSecret, { remoteAddress: "10.1.1.1", forwardedFor: "198.51.100.99, 203.0.113.9" });
    expect(stillLimited.statusCode).toBe(429);
  });
});

describe("a flood of failures for one client from many addresses (S15)", () => {
  it("is logged once, counted in a metric and shown on the application's page, and never slows the real client", async () => {
    const client = await publisher();
    for (let i = 0; i < 120; i++) {
      const address = `172.16.0.${i + 1}`;
      const response =
        i % 2 === 0
          ? await tokenRequest(first.app, client, "guess", { remoteAddress: address })
          : await tokenRequest(second.app, client, "guess", { remoteAddress: "10.1.1.1", forwardedFor: address });
      expect(response.statusCode).toBe(401);
      if (i === 60) expect((await tokenRequest(first.app, client, client.clientSecret, { remoteAddress: "198.51.100.20" })).json()).toEqual(authenticated);
    }
    expect((await tokenRequest(first.app, client, client.clientSecret, { remoteAddress: "198.51.100.20" })).json()).toEqual(authenticated);

    const floodLines = lines.filter((line) => line.includes("client authentication flood"));
    expect(floodLines).toHaveLength(1);
    expect(JSON.parse(floodLines[0] as string)).toMatchObject({ level: 40, application: "Publisher", clientId: client.clientId, failures: 101 });
    expect(floodLines[0]).not.toContain("guess");
    const events = await database.db.select().from(auditEvents).where(eq(auditEvents.action, "client_authentication_flood"));
    expect(events).toHaveLength(1);

    const metrics = (await first.app.inject({ method: "GET", url: "/metrics" })).body;
    expect(metrics).toContain("signon_client_authentication_floods 1");

    const admin = await createUser(first.ctx, { role: "superadmin" });
    const page = textOf(await (await signedInBrowser(first.app, admin.email, defaultPassword)).get(`/applications/${events[0]?.applicationId ?? ""}`));
    expect(page).toContain("Failed authentications 120 in the current 10-minute window");
    expect(page).toContain("Last flood (over 100 in 10 minutes):");

    first.clock.advance(600);
    expect((await first.app.inject({ method: "GET", url: "/metrics" })).body).toContain("signon_client_authentication_floods 0");
  });
});
