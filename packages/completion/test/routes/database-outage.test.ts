import { createDrizzle, createPool } from "@tessera/db";
import { FaultProxy } from "@tessera/db/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStaleWorker } from "../../src/aggregation/stale-worker.js";
import { buildApp } from "../../src/app.js";
import { SignonCallerResolver } from "../../src/auth/signon-caller-resolver.js";
import { DEFAULT_AGGREGATOR_TYPES } from "../../src/config.js";
import { createContext, type CompletionContext } from "../../src/context.js";
import * as schema from "../../src/db/schema.js";
import type { FastifyTypeBox } from "../../src/http/fastify-typebox.js";
import { baseData, block, COURSE, load } from "../support/data.js";
import { useHarness } from "../support/harness.js";

// Completion on a pool that reaches the database through a proxy; Sign-on keeps its own direct connection.
const h = await useHarness();
const proxy = await FaultProxy.start(h.database.url);
let pool: pg.Pool;
let ctx: CompletionContext;
let app: FastifyTypeBox;
let token = "";

beforeAll(async () => {
  pool = createPool({ url: proxy.urlFor(h.database.url), max: 4, connectionTimeoutMs: 2000 });
  ctx = createContext(
    { aggregatorTypes: DEFAULT_AGGREGATOR_TYPES, rebuildStaleFromScratch: false, preparedStatements: true },
    createDrizzle(pool, schema),
    new SignonCallerResolver({ signonUrl: h.signon.url, clientId: h.signon.clientId, cacheSeconds: 0 }),
  );
  app = await buildApp(ctx);
  await app.ready();
  token = (await h.signon.tokenFor("ops@example.com", ["staff"], { apiUser: true })).token;
});
afterAll(async () => {
  await app.close();
  await pool.end();
  await proxy.close();
});

const batch = (value: number) => ({
  method: "POST" as const,
  url: "/api/completion/v1/completion-batch",
  headers: { authorization: `Bearer ${token}` },
  payload: { username: "ada", course_key: COURSE, blocks: { [block("problem", "p1")]: value } },
});
const read = () => ({ method: "GET" as const, url: `/api/completion/v1/course/${COURSE}/?username=ada`, headers: { authorization: `Bearer ${token}` } });

describe("Completion while its database refuses connections", () => {
  beforeAll(async () => {
    await load(h.ctx, baseData());
    expect((await app.inject(batch(0.5))).statusCode).toBe(200);
    proxy.cutAll();
    await proxy.refuse();
  });

  it("answers a completion batch 503 with Retry-After and its usual error body", async () => {
    const response = await app.inject(batch(1));
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("5");
    expect(response.json()).toEqual({ detail: "The database is unavailable; try again later." });
  });

  it("answers a read 503 in the same shape", async () => {
    const response = await app.inject(read());
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ detail: "The database is unavailable; try again later." });
  });

  it("answers /healthcheck/ready 503 naming the database and /healthcheck/live 200", async () => {
    const ready = await app.inject({ method: "GET", url: "/healthcheck/ready" });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ failed: ["database", "migrations"], checks: { database: { status: "failed", reason: "database unavailable" } } });
    expect((await app.inject({ method: "GET", url: "/healthcheck/live" })).statusCode).toBe(200);
  });

  it("keeps the stale worker running, logging the outage once and its end once", async () => {
    const lines: string[] = [];
    const errors: unknown[] = [];
    const worker = startStaleWorker(ctx, {
      intervalMs: 20,
      onError: (error) => errors.push(error),
      log: { info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`) },
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await proxy.accept();
      for (let n = 0; n < 100 && lines.length < 2; n++) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await worker.stop();
    }
    expect(errors).toEqual([]);
    expect(lines).toEqual([
      expect.stringMatching(/^warn stale worker: database unavailable \(.*ECONNREFUSED.*\); retrying until it answers$/),
      expect.stringMatching(/^info stale worker: database available again after \d+\.\d s \(\d+ failed attempt\(s\)\)$/),
    ]);
  });

  describe("and once it accepts them again", () => {
    beforeAll(() => proxy.accept());

    it("takes the batch it refused and reads it back, without a restart", async () => {
      expect((await app.inject({ method: "GET", url: "/healthcheck/ready" })).statusCode).toBe(200);
      await load(h.ctx, baseData()); // the harness empties the schema before each test
      expect((await app.inject(batch(1))).statusCode).toBe(200);
      const response = await app.inject(read());
      expect(response.statusCode).toBe(200);
      expect(response.json<{ results: { completion: { earned: number } }[] }>().results[0]?.completion.earned).toBe(1);
    });
  });
});
