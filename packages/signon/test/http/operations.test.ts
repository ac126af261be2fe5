import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TESSERA_VERSION } from "@tessera/service-kit";
import { createApp, createUser } from "../support/factories.js";
import { buildTestSignon, openTestDatabase, testConfig, type TestSignon } from "../support/signon.js";

const database = await openTestDatabase();
const metricsToken = "scrape-token-0123456789abcdef";
let signon: TestSignon;
let production: TestSignon;
beforeAll(async () => {
  signon = await buildTestSignon(database);
  production = await buildTestSignon(
    database,
    testConfig({ NODE_ENV: "production", SIGNON_TRUST_PROXY: "true", SIGNON_PUBLIC_URL: "https://signon.example", SIGNON_METRICS_TOKEN: metricsToken }),
  );
});
afterAll(async () => {
  await signon.app.close();
  await production.app.close();
  await database.close();
});
beforeEach(() => database.reset());

/** The value of one sample of the exposition text, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /healthcheck/live and /healthcheck/ready", () => {
  it("answer 200 when the database answers and Sign-on's migrations are applied", async () => {
    const live = await signon.app.inject({ method: "GET", url: "/healthcheck/live" });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: "ok", version: TESSERA_VERSION });
    const ready = await signon.app.inject({ method: "GET", url: "/healthcheck/ready" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ok", version: TESSERA_VERSION, checks: { database: { status: "ok" }, migrations: { status: "ok" } } });
  });

  it("answer plain HTTP in production: probes come from the load balancer itself", async () => {
    expect((await production.app.inject({ method: "GET", url: "/healthcheck/ready" })).statusCode).toBe(200);
    expect((await production.app.inject({ method: "GET", url: "/healthcheck/live" })).statusCode).toBe(200);
    expect((await production.app.inject({ method: "GET", url: "/metrics", headers: { authorization: `Bearer ${metricsToken}` } })).statusCode).toBe(403);
  });
});

describe("GET /metrics", () => {
  it("counts requests by route pattern and shows the push outbox by status", async () => {
    const { application } = await createApp(signon.ctx, { name: "Publisher", redirectUris: ["https://publisher.example/auth/gds/callback"] });
    for (let n = 0; n < 4; n++) await createUser(signon.ctx, { permissions: { Publisher: ["signin"] } });
    const queued = await database.pool.query<{ id: string }>(`select id from signon.push_deliveries where application_id = $1 order by id`, [application.id]);
    expect(queued.rows).toHaveLength(4);
    const [delivered, failed, retrying] = queued.rows.map((row) => row.id);
    await database.pool.query(`update signon.push_deliveries set status = 'delivered', delivered_at = now() where id = $1`, [delivered]);
    await database.pool.query(`update signon.push_deliveries set status = 'failed' where id = $1`, [failed]);
    await database.pool.query(`update signon.push_deliveries set attempts = 2, pending_since = $2::timestamptz where id = $1`, [
      retrying,
      new Date(signon.clock.now().getTime() - 90_000).toISOString(),
    ]);
    await signon.app.inject({ method: "GET", url: "/user.json?access_token=abc123" });

    const response = await signon.app.inject({ method: "GET", url: "/metrics" });
    expect(response.statusCode).toBe(200);
    const text = response.body;
    expect(sample(text, 'signon_push_deliveries{status="pending"}')).toBe(2);
    expect(sample(text, 'signon_push_deliveries{status="delivered"}')).toBe(1);
    expect(sample(text, 'signon_push_deliveries{status="failed"}')).toBe(1);
    expect(sample(text, "signon_push_retrying")).toBe(1);
    expect(sample(text, "signon_push_oldest_pending_seconds")).toBe(90);
    expect(sample(text, 'http_requests_total{method="GET",route="/user.json",status="401"}')).toBe(1);
    expect(text).not.toContain("abc123");
  });

  it("shows an empty outbox as zeros", async () => {
    const text = (await signon.app.inject({ method: "GET", url: "/metrics" })).body;
    expect(sample(text, 'signon_push_deliveries{status="pending"}')).toBe(0);
    expect(sample(text, "signon_push_oldest_pending_seconds")).toBe(0);
  });

  it("requires the bearer token when SIGNON_METRICS_TOKEN is set", async () => {
    const overHttps = { "x-forwarded-proto": "https" };
    const refused = await production.app.inject({ method: "GET", url: "/metrics", headers: overHttps });
    expect(refused.statusCode).toBe(401);
    const wrong = await production.app.inject({ method: "GET", url: "/metrics", headers: { ...overHttps, authorization: `Bearer ${metricsToken}x` } });
    expect(wrong.statusCode).toBe(401);
    const allowed = await production.app.inject({ method: "GET", url: "/metrics", headers: { ...overHttps, authorization: `Bearer ${metricsToken}` } });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.body).toContain("signon_push_deliveries");
  });
});
