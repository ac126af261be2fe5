import { createDrizzle, createPool, TRANSACTION_ATTEMPTS } from "@tessera/db";
import { FaultProxy, useTestDatabase } from "@tessera/db/testing";
import Fastify, { type FastifyInstance } from "fastify";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  answeringDatabaseOutages,
  databaseReadinessChecks,
  registerHealthChecks,
  registerTransactionRetryMetrics,
  serviceLoggerOptions,
  temporarilyUnavailablePage,
  TESSERA_VERSION,
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
let conflictRuns = 0;

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
  // A transaction that PostgreSQL ends with a deadlock at every run.
  app.get("/conflict", async () =>
    createDrizzle(pool).transaction(async () => {
      conflictRuns += 1;
      throw Object.assign(new Error("Failed query: update …"), { cause: Object.assign(new Error("deadlock detected"), { code: "40P01" }) });
    }),
  );
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
      version: TESSERA_VERSION,
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

describe("a transaction that PostgreSQL still ends with a deadlock at its last run", () => {
  it("answers 503 with a short Retry-After, counted on the metrics, never 500", async () => {
    const registry = new Registry();
    registerTransactionRetryMetrics(registry, pool);
    const response = await app.inject({ method: "GET", url: "/conflict" });
    expect(conflictRuns).toBe(TRANSACTION_ATTEMPTS);
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("1");
    expect(response.headers["cache-control"]).toBe("no-store");
    expect(response.json()).toEqual({ detail: "The database is unavailable; try again later." });
    const warning = logs.entries().find((entry) => entry["msg"] === "transaction conflict after retries: answered 503");
    expect(warning).toEqual(expect.objectContaining({ level: 40, conflict: "deadlock", database: "40P01 deadlock detected" }));

    const text = await registry.metrics();
    expect(text).toContain(`database_transaction_retries_total{reason="deadlock"} ${TRANSACTION_ATTEMPTS - 1}`);
    expect(text).toContain('database_transaction_retries_total{reason="serialization_failure"} 0');
    expect(text).toContain('database_transaction_conflicts_unresolved_total{reason="deadlock"} 1');
  });
});
