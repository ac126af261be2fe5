import { readFileSync } from "node:fs";
import { createPool, runMigrations, type RunQuery } from "@tessera/db";
import { useTestDatabase } from "@tessera/db/testing";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckFailure, databaseReadinessChecks, registerHealthChecks, TESSERA_VERSION } from "../src/index.js";
import { kitMigrations } from "./fixtures/kit-migrations.js";

/** The version of the root package.json, which the endpoints answer unless told another. */
const rootVersion = (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version;

const database = await useTestDatabase({ migrations: [kitMigrations] });
const runQuery: RunQuery = async (text) => (await database.pool.query<Record<string, unknown>>(text)).rows;
afterAll(() => database.close());

async function appWith(checks: Parameters<typeof registerHealthChecks>[1]) {
  const app = Fastify();
  registerHealthChecks(app, checks);
  await app.ready();
  return app;
}

describe("GET /healthcheck/live", () => {
  it("answers 200 whatever the checks say", async () => {
    const app = await appWith({ checks: { broken: () => Promise.reject(new Error("down")) } });
    const response = await app.inject({ method: "GET", url: "/healthcheck/live" });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: "ok", version: rootVersion });
    await app.close();
  });
});

describe("the version", () => {
  it("is the root package.json's, which every workspace package carries", () => {
    expect(rootVersion).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    expect(TESSERA_VERSION).toBe(rootVersion);
  });

  it("is answered by both endpoints, and can be given", async () => {
    const app = await appWith({ checks: {}, version: "9.9.9" });
    expect((await app.inject({ method: "GET", url: "/healthcheck/live" })).json()).toEqual({ status: "ok", version: "9.9.9" });
    expect((await app.inject({ method: "GET", url: "/healthcheck/ready" })).json()).toEqual({ status: "ok", version: "9.9.9", checks: {} });
    await app.close();
  });
});

describe("GET /healthcheck/ready", () => {
  it("answers 200 when the database answers and every migration is applied", async () => {
    const app = await appWith({ checks: databaseReadinessChecks(runQuery, [kitMigrations]) });
    const response = await app.inject({ method: "GET", url: "/healthcheck/ready" });
    expect(response.statusCode).toBe(200);
    expect(response.headers["cache-control"]).toBe("no-store");
    expect(response.json()).toEqual({ status: "ok", version: rootVersion, checks: { database: { status: "ok" }, migrations: { status: "ok" } } });
    await app.close();
  });

  it("answers 503 naming the migrations check when a migration is not applied", async () => {
    await database.pool.query(`delete from drizzle.kit_migrations`);
    try {
      const app = await appWith({ checks: databaseReadinessChecks(runQuery, [kitMigrations]) });
      const response = await app.inject({ method: "GET", url: "/healthcheck/ready" });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        status: "unavailable",
        version: rootVersion,
        failed: ["migrations"],
        checks: { database: { status: "ok" }, migrations: { status: "failed", reason: "1 migration(s) not applied" } },
      });
      await app.close();
    } finally {
      await database.pool.query(`drop schema kit cascade`);
      await runMigrations(database.pool, [kitMigrations]);
    }
  });

  describe("with a database that refuses connections", () => {
    // Port 1 on loopback: nothing listens there, so connecting fails at once.
    const unreachable = createPool({ url: "postgres://nobody@127.0.0.1:1/none", max: 1 });
    const runUnreachable: RunQuery = async (text) => (await unreachable.query<Record<string, unknown>>(text)).rows;
    afterAll(() => unreachable.end());

    it("answers 503 naming both checks, without the connection details", async () => {
      const app = await appWith({ checks: databaseReadinessChecks(runUnreachable, [kitMigrations]) });
      const response = await app.inject({ method: "GET", url: "/healthcheck/ready" });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        status: "unavailable",
        version: rootVersion,
        failed: ["database", "migrations"],
        checks: { database: { status: "failed", reason: "database unavailable" }, migrations: { status: "failed", reason: "database unavailable" } },
      });
      await app.close();
    });
  });

  describe("with a check that never answers", () => {
    let app: Awaited<ReturnType<typeof appWith>>;
    beforeAll(async () => {
      app = await appWith({ timeoutMs: 50, checks: { database: () => new Promise<void>(() => {}), cache: async () => {} } });
    });
    afterAll(() => app.close());

    it("answers 503 once the timeout has passed, naming the check", async () => {
      const response = await app.inject({ method: "GET", url: "/healthcheck/ready" });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        status: "unavailable",
        version: rootVersion,
        failed: ["database"],
        checks: { database: { status: "failed", reason: "no answer within 50 ms" }, cache: { status: "ok" } },
      });
    });
  });

  it("shows the reason of a CheckFailure", async () => {
    const app = await appWith({ checks: { queue: () => Promise.reject(new CheckFailure("worker stopped")) } });
    const response = await app.inject({ method: "GET", url: "/healthcheck/ready" });
    expect(response.json()).toEqual({ status: "unavailable", version: rootVersion, failed: ["queue"], checks: { queue: { status: "failed", reason: "worker stopped" } } });
    await app.close();
  });

  it("runs the checks once for requests that arrive while they run", async () => {
    let runs = 0;
    let answer: () => void = () => undefined;
    const app = await appWith({
      checks: {
        slow: () => {
          runs += 1;
          return new Promise<void>((resolve) => (answer = resolve));
        },
      },
    });
    const responses = Array.from({ length: 5 }, () => app.inject({ method: "GET", url: "/healthcheck/ready" }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    answer();
    expect((await Promise.all(responses)).map((response) => response.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(runs).toBe(1);
    const later = app.inject({ method: "GET", url: "/healthcheck/ready" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    answer();
    expect((await later).statusCode).toBe(200);
    expect(runs).toBe(2);
    await app.close();
  });
});
