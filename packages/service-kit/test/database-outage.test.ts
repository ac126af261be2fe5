import { createPool } from "@tessera/db";
import { FaultProxy, useTestDatabase } from "@tessera/db/testing";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  answeringDatabaseOutages,
  databaseReadinessChecks,
  registerHealthChecks,
  serviceLoggerOptions,
  temporarilyUnavailablePage,
  type ErrorHandler,
} from "../src/index.js";
import { kitMigrations } from "./fixtures/kit-migrations.js";
import { LogCapture } from "./fixtures/log-capture.js";

// A real database behind a proxy that refuses connections on demand, as while PostgreSQL restarts.
const database = await useTestDatabase({ migrations: [kitMigrations] });
const proxy = await FaultProxy.start(database.url);
const pool = createPool({ url: proxy.urlFor(database.url), max: 2, connectionTimeoutMs: 1000 });
const logs = new LogCapture();
let app: FastifyInstance;

/** The service's own handler for everything else: a 500 in its own shape. */
const serviceHandler: ErrorHandler = (_error, _request, reply) => reply.code(500).send({ detail: "Internal server error." });

beforeAll(async () => {
  app = Fastify({ logger: serviceLoggerOptions({ stream: logs }) });
  app.setErrorHandler(
    answeringDatabaseOutages(serviceHandler, {
      json: () => ({ detail: "The database is unavailable; try again later." }),
      html: (request) => request.url.startsWith("/page"),
    }),
  );
  registerHealthChecks(app, { checks: databaseReadinessChecks(async (text) => (await pool.query<Record<string, unknown>>(text)).rows, [kitMigrations]) });
  app.get("/api", async () => (await pool.query("select 1 as n")).rows);
  app.get("/page", async () => (await pool.query("select 1 as n")).rows);
  app.get("/bug", async () => {
    throw new Error("a bug");
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await pool.end();
  await proxy.close();
  await database.close();
});

describe("while the database refuses connections", () => {
  beforeAll(async () => {
    await proxy.refuse();
    proxy.cutAll();
  });
  afterAll(() => proxy.accept());

  it("answers a JSON route 503 with Retry-After and the service's error body", async () => {
    const response = await app.inject({ method: "GET", url: "/api" });
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("5");
    expect(response.headers["cache-control"]).toBe("no-store");
    expect(response.json()).toEqual({ detail: "The database is unavailable; try again later." });
  });

  it("answers a browser page 503 with the plain temporarily-unavailable page", async () => {
    const response = await app.inject({ method: "GET", url: "/page" });
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("5");
    expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(response.body).toBe(temporarilyUnavailablePage);
  });

  it("leaves other errors to the service's handler", async () => {
    const response = await app.inject({ method: "GET", url: "/bug" });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ detail: "Internal server error." });
  });

  it("answers /healthcheck/ready 503 naming the database, and /healthcheck/live 200", async () => {
    const ready = await app.inject({ method: "GET", url: "/healthcheck/ready" });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({
      status: "unavailable",
      failed: ["database", "migrations"],
      checks: { database: { status: "failed", reason: "database unavailable" }, migrations: { status: "failed", reason: "database unavailable" } },
    });
    expect((await app.inject({ method: "GET", url: "/healthcheck/live" })).statusCode).toBe(200);
  });

  it("logs a failing readiness check once, not on every probe", async () => {
    for (let probe = 0; probe < 3; probe++) await app.inject({ method: "GET", url: "/healthcheck/ready" });
    const failures = logs.entries().filter((entry) => entry["msg"] === "readiness check database failed");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ level: 40, check: "database", reason: "database unavailable" });
  });

  it("logs each 503 as a warning with the driver's error and no stack", () => {
    const warnings = logs.entries().filter((entry) => entry["msg"] === "database unavailable: answered 503");
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(warnings[0]).toEqual(expect.objectContaining({ level: 40, database: expect.stringMatching(/ECONNREFUSED/) }));
    expect(JSON.stringify(warnings)).not.toContain("stack");
  });
});

describe("once the database accepts connections again", () => {
  it("answers at once, without a restart, and logs that readiness is back", async () => {
    const response = await app.inject({ method: "GET", url: "/api" });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual([{ n: 1 }]);
    expect((await app.inject({ method: "GET", url: "/healthcheck/ready" })).statusCode).toBe(200);
    expect(logs.entries().map((entry) => String(entry["msg"]))).toContainEqual(expect.stringMatching(/^readiness check database passes again after \d+\.\d s$/));
  });
});
