import { describe, expect, it } from "vitest";
import { TESSERA_VERSION } from "@tessera/service-kit";
import { buildApp } from "../../src/app.js";
import { markCourseStale } from "../../src/repositories/stale.js";
import { baseData, COURSE, load } from "../support/data.js";
import { useHarness } from "../support/harness.js";

const h = await useHarness();

/** The value of one sample of the exposition text, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /healthcheck/live and /healthcheck/ready", () => {
  it("answer 200 when the database answers and Completion's migrations are applied", async () => {
    const live = await h.app.inject({ method: "GET", url: "/healthcheck/live" });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: "ok", version: TESSERA_VERSION });
    const ready = await h.app.inject({ method: "GET", url: "/healthcheck/ready" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ok", version: TESSERA_VERSION, checks: { database: { status: "ok" }, migrations: { status: "ok" } } });
  });
});

describe("GET /metrics", () => {
  it("shows the aggregation lag: unresolved stale records and the age of the oldest", async () => {
    await load(h.ctx, baseData());
    await h.database.pool.query(`update completion.stale_completions set resolved = true`);
    const marked = await markCourseStale(h.ctx.db, COURSE, false);
    expect(marked).toBe(5);
    const now = h.ctx.now().getTime();
    await h.database.pool.query(`update completion.stale_completions set created = $1::timestamptz where not resolved`, [new Date(now - 10_000).toISOString()]);
    await h.database.pool.query(`update completion.stale_completions set created = $1::timestamptz where id = (select min(id) from completion.stale_completions where not resolved)`, [
      new Date(now - 120_000).toISOString(),
    ]);

    const text = (await h.app.inject({ method: "GET", url: "/metrics" })).body;
    expect(sample(text, "completion_stale_records")).toBe(5);
    expect(sample(text, "completion_stale_oldest_seconds")).toBe(120);

    await h.database.pool.query(`update completion.stale_completions set resolved = true`);
    const after = (await h.app.inject({ method: "GET", url: "/metrics" })).body;
    expect(sample(after, "completion_stale_records")).toBe(0);
    expect(sample(after, "completion_stale_oldest_seconds")).toBe(0);
  });

  it("counts API requests by route pattern, not by course key", async () => {
    const { token } = await h.signon.tokenFor("metrics-reader@example.com");
    await h.app.inject({ method: "GET", url: `/api/completion/v1/course/${COURSE}/?username=ada`, headers: { authorization: `Bearer ${token}` } });
    const text = (await h.app.inject({ method: "GET", url: "/metrics" })).body;
    const series = text.split("\n").filter((line) => line.startsWith("http_requests_total{") && line.includes("/api/completion/v1/course/"));
    expect(series.length).toBeGreaterThan(0);
    expect(text).not.toContain(COURSE);
  });

  it("requires the bearer token of COMPLETION_METRICS_TOKEN when one is set", async () => {
    const app = await buildApp(h.ctx, { metricsToken: "completion-scrape-token-0123" });
    expect((await app.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(401);
    expect((await app.inject({ method: "GET", url: "/metrics", headers: { authorization: "Bearer completion-scrape-token-0124" } })).statusCode).toBe(401);
    const allowed = await app.inject({ method: "GET", url: "/metrics", headers: { authorization: "Bearer completion-scrape-token-0123" } });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.body).toContain("completion_stale_records");
    await app.close();
  });
});

describe("Completion logs", () => {
  it("carry request ids and never the caller's bearer token", async () => {
    const lines: string[] = [];
    const app = await buildApp(h.ctx, { logger: { level: "debug", stream: { write: (line: string) => void lines.push(line) } } });
    await load(h.ctx, baseData());
    const { token } = await h.signon.tokenFor("ada@example.com");
    const read = await app.inject({
      method: "GET",
      url: `/api/completion/v1/course/${COURSE}/?username=ada`,
      headers: { authorization: `Bearer ${token}`, "x-request-id": "completion-read-1" },
    });
    expect(read.statusCode).toBe(200);
    expect(read.headers["x-request-id"]).toBe("completion-read-1");
    const refused = await app.inject({ method: "GET", url: "/api/completion/v1/course/?access_token=query-token-value-9", headers: { authorization: "Bearer wrong-token-value-77" } });
    expect(refused.statusCode).toBe(401);
    await app.close();

    const text = lines.join("");
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const secret of [token, "query-token-value-9", "wrong-token-value-77"]) expect(text.includes(secret), secret).toBe(false);
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries.filter((entry) => entry["request_id"] === "completion-read-1").map((entry) => entry["msg"])).toEqual(["incoming request", "request completed"]);
    for (const entry of entries) expect(typeof entry["request_id"]).toBe("string");
  });
});
