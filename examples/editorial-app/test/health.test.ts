import Fastify from "fastify";
import { TESSERA_VERSION } from "@tessera/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import editorialApp from "../src/app.js";
import { editorialTestDatabase } from "./support/editorial-app.js";

const database = await editorialTestDatabase();
const app = Fastify({ logger: false });
await app.register(editorialApp, {
  config: {
    signonUrl: "http://127.0.0.1:9",
    clientId: "editorial",
    clientSecret: "secret",
    redirectUri: "http://127.0.0.1:3002/auth/gds/callback",
    database: { url: database.url, dataDir: "unused" },
  },
});
await app.ready();
afterAll(async () => {
  await app.close();
  await database.close();
});

describe("GET /healthcheck/live and /healthcheck/ready", () => {
  it("answer 200 when the session and user store answers and is migrated", async () => {
    const live = await app.inject({ method: "GET", url: "/healthcheck/live" });
    expect(live.json()).toEqual({ status: "ok", version: TESSERA_VERSION });
    const ready = await app.inject({ method: "GET", url: "/healthcheck/ready" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ok", version: TESSERA_VERSION, checks: { database: { status: "ok" }, migrations: { status: "ok" } } });
  });
});
