import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { registerMetrics, registerScrapedGauges } from "../src/index.js";

async function appWithMetrics(token: string | null = null) {
  const app = Fastify();
  const registry = registerMetrics(app, { token });
  app.get("/items/:id", async (request) => ({ id: (request.params as { id: string }).id }));
  app.post("/items", async (_request, reply) => reply.code(201).send({}));
  await app.ready();
  return { app, registry };
}

async function scrape(app: Awaited<ReturnType<typeof appWithMetrics>>["app"], headers: Record<string, string> = {}) {
  return app.inject({ method: "GET", url: "/metrics", headers });
}

/** The value of one sample line of the exposition text, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics", () => {
  it("counts requests by method, route pattern and status, never by raw URL", async () => {
    const { app } = await appWithMetrics();
    await app.inject({ method: "GET", url: "/items/1?secret=x" });
    await app.inject({ method: "GET", url: "/items/2" });
    await app.inject({ method: "POST", url: "/items" });
    await app.inject({ method: "GET", url: "/no/such/path" });
    const response = await scrape(app);
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = response.body;
    expect(sample(text, 'http_requests_total{method="GET",route="/items/:id",status="200"}')).toBe(2);
    expect(sample(text, 'http_requests_total{method="POST",route="/items",status="201"}')).toBe(1);
    expect(sample(text, 'http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count{method="GET",route="/items/:id",status="200"}')).toBe(2);
    expect(text).not.toContain("/items/1");
    expect(text).not.toContain("/no/such/path");
    expect(text).toContain("process_cpu_user_seconds_total");
    expect(text).toContain("nodejs_eventloop_lag_seconds");
    await app.close();
  });

  it("keeps the figures of two applications in one process apart", async () => {
    const first = await appWithMetrics();
    const second = await appWithMetrics();
    await first.app.inject({ method: "GET", url: "/items/1" });
    expect(sample((await scrape(first.app)).body, 'http_requests_total{method="GET",route="/items/:id",status="200"}')).toBe(1);
    expect(sample((await scrape(second.app)).body, 'http_requests_total{method="GET",route="/items/:id",status="200"}')).toBeUndefined();
    await first.app.close();
    await second.app.close();
  });

  describe("with a token", () => {
    const token = "metrics-token-0123456789abcdef";

    it.each([
      ["no Authorization header", {}],
      ["a wrong token", { authorization: "Bearer metrics-token-0123456789abcdeX" }],
      ["a prefix of the token", { authorization: "Bearer metrics-token" }],
      ["the token as Basic credentials", { authorization: `Basic ${token}` }],
      ["an empty bearer", { authorization: "Bearer " }],
    ])("answers 401 to %s", async (_case, headers: Record<string, string>) => {
      const { app } = await appWithMetrics(token);
      const response = await scrape(app, headers);
      expect(response.statusCode).toBe(401);
      expect(response.headers["www-authenticate"]).toBe('Bearer realm="metrics"');
      expect(response.json()).toEqual({ error: "unauthorized" });
      await app.close();
    });

    it("answers the right bearer token", async () => {
      const { app } = await appWithMetrics(token);
      const response = await scrape(app, { authorization: `Bearer ${token}` });
      expect(response.statusCode).toBe(200);
      expect(response.body).toContain("http_requests_total");
      await app.close();
    });
  });
});

describe("registerScrapedGauges", () => {
  it("reads once per scrape for all its gauges, at scrape time", async () => {
    const { app, registry } = await appWithMetrics();
    let reads = 0;
    let depth = 3;
    registerScrapedGauges(
      registry,
      async () => {
        reads += 1;
        return { depth, byStatus: { pending: depth, failed: 1 } };
      },
      [
        { name: "queue_depth", help: "Items waiting", values: (row) => row.depth },
        {
          name: "queue_items",
          help: "Items by status",
          labelNames: ["status"],
          values: (row) => Object.entries(row.byStatus).map(([status, value]) => ({ labels: { status }, value })),
        },
      ],
      () => {},
    );
    let text = (await scrape(app)).body;
    expect(reads).toBe(1);
    expect(sample(text, "queue_depth")).toBe(3);
    expect(sample(text, 'queue_items{status="pending"}')).toBe(3);
    expect(sample(text, 'queue_items{status="failed"}')).toBe(1);
    depth = 7;
    text = (await scrape(app)).body;
    expect(reads).toBe(2);
    expect(sample(text, "queue_depth")).toBe(7);
    await app.close();
  });

  it("shows NaN and no labelled series when the read fails, and reports the error once", async () => {
    const { app, registry } = await appWithMetrics();
    const errors: unknown[] = [];
    let fail = false;
    registerScrapedGauges(
      registry,
      async () => {
        if (fail) throw new Error("database down");
        return 5;
      },
      [
        { name: "lag_records", help: "Records waiting", values: (row) => row },
        { name: "lag_by_kind", help: "Records by kind", labelNames: ["kind"], values: (row) => [{ labels: { kind: "a" }, value: row }] },
      ],
      (error) => errors.push(error),
    );
    expect(sample((await scrape(app)).body, 'lag_by_kind{kind="a"}')).toBe(5);
    fail = true;
    const response = await scrape(app);
    expect(response.statusCode).toBe(200);
    expect(sample(response.body, "lag_records")).toBeNaN();
    expect(sample(response.body, 'lag_by_kind{kind="a"}')).toBeUndefined();
    expect(errors).toHaveLength(1);
    await app.close();
  });

  it("reports a database outage once, however many scrapes fail, and again after the database was back", async () => {
    const { app, registry } = await appWithMetrics();
    const errors: unknown[] = [];
    let down = false;
    registerScrapedGauges(
      registry,
      async () => {
        if (down) throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
        return 5;
      },
      [{ name: "lag_records", help: "Records waiting", values: (row) => row }],
      (error) => errors.push(error),
    );
    down = true;
    for (let n = 0; n < 3; n++) expect(sample((await scrape(app)).body, "lag_records")).toBeNaN();
    expect(errors).toHaveLength(1);
    down = false;
    expect(sample((await scrape(app)).body, "lag_records")).toBe(5);
    down = true;
    await scrape(app);
    expect(errors).toHaveLength(2);
    await app.close();
  });

  it("shows a counter of type counter from the same read, keeping its last value while the read fails", async () => {
    const { app, registry } = await appWithMetrics();
    const errors: unknown[] = [];
    let failures: number | null = 2;
    let reads = 0;
    registerScrapedGauges(
      registry,
      async () => {
        reads += 1;
        if (failures === null) throw new Error("database down");
        return { failures, consecutive: 1 };
      },
      [
        { name: "fetch_failures_total", help: "Fetches that failed", type: "counter", values: (row) => row.failures },
        { name: "fetch_consecutive_failures", help: "Failures since the last success", values: (row) => row.consecutive },
      ],
      (error) => errors.push(error),
    );
    let text = (await scrape(app)).body;
    expect(reads).toBe(1);
    expect(text).toContain("# TYPE fetch_failures_total counter");
    expect(sample(text, "fetch_failures_total")).toBe(2);
    expect(sample(text, "fetch_consecutive_failures")).toBe(1);
    failures = 3;
    expect(sample((await scrape(app)).body, "fetch_failures_total")).toBe(3);
    failures = null;
    text = (await scrape(app)).body;
    expect(sample(text, "fetch_failures_total")).toBe(3);
    expect(sample(text, "fetch_consecutive_failures")).toBeNaN();
    expect(errors).toHaveLength(1);
    await app.close();
  });
});
