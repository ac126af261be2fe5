import { FaultProxy } from "@tessera/db/testing";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import editorialApp from "../src/app.js";
import { editorialTestDatabase } from "./support/editorial-app.js";

// The application reaches its database through a proxy that refuses connections, as while PostgreSQL restarts.
const database = await editorialTestDatabase();
const proxy = await FaultProxy.start(database.url);
const app = Fastify({ logger: false });
await app.register(editorialApp, {
  config: {
    signonUrl: "http://127.0.0.1:9",
    clientId: "editorial",
    clientSecret: "secret",
    redirectUri: "http://127.0.0.1:3002/auth/gds/callback",
    database: { url: proxy.urlFor(database.url), dataDir: "unused" },
  },
});
await app.ready();
afterAll(async () => {
  await app.close();
  await proxy.close();
  await database.close();
});

describe("the editorial app while its database refuses connections", () => {
  beforeAll(async () => {
    proxy.cutAll();
    await proxy.refuse();
  });

  it("answers /healthcheck/ready 503 naming the database, /healthcheck/live 200", async () => {
    const ready = await app.inject({ method: "GET", url: "/healthcheck/ready" });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ failed: ["database", "migrations"], checks: { database: { status: "failed", reason: "database unavailable" } } });
    expect((await app.inject({ method: "GET", url: "/healthcheck/live" })).statusCode).toBe(200);
  });

  it("answers sign-in 503 with Retry-After and a plain page, not 500", async () => {
    const response = await app.inject({ method: "GET", url: "/auth/gds", headers: { accept: "text/html" } });
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("5");
    expect(response.body).toContain("Temporarily unavailable");
  });

  it("answers a signed-in page 503 too", async () => {
    const response = await app.inject({ method: "GET", url: "/admin", headers: { accept: "text/html", cookie: "editorial_session=someone" } });
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("5");
  });

  describe("and once it accepts them again", () => {
    beforeAll(() => proxy.accept());

    it("is ready and starts sign-ins again, without a restart", async () => {
      expect((await app.inject({ method: "GET", url: "/healthcheck/ready" })).statusCode).toBe(200);
      const response = await app.inject({ method: "GET", url: "/auth/gds" });
      expect(response.statusCode).toBe(302);
    });
  });
});
