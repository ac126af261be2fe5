import Fastify from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { echoRequestId, requestIdServerOptions, serviceLoggerOptions } from "../src/index.js";
import { LogCapture } from "./fixtures/log-capture.js";

const log = new LogCapture();
const app = Fastify({ ...requestIdServerOptions(), logger: serviceLoggerOptions({ stream: log }) });
echoRequestId(app);
app.get("/hello", async (request) => {
  request.log.info("handling hello");
  return { id: request.id };
});
afterAll(() => app.close());

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("request ids", () => {
  it("keeps a sane incoming X-Request-Id and sends it back", async () => {
    const response = await app.inject({ method: "GET", url: "/hello", headers: { "x-request-id": "edge-1.2_3" } });
    expect(response.headers["x-request-id"]).toBe("edge-1.2_3");
    expect(response.json()).toEqual({ id: "edge-1.2_3" });
  });

  it("accepts 64 characters", async () => {
    const id = "a".repeat(64);
    const response = await app.inject({ method: "GET", url: "/hello", headers: { "x-request-id": id } });
    expect(response.headers["x-request-id"]).toBe(id);
  });

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["65 characters", "a".repeat(65)],
    ["spaces", "a b"],
    ["a quote and braces", '"}{"level":60'],
    ["a newline", "a\nb"],
  ])("makes a new UUID when the incoming id is %s", async (_case, incoming) => {
    const response = await app.inject({ method: "GET", url: "/hello", headers: incoming === undefined ? {} : { "x-request-id": incoming } });
    expect(response.headers["x-request-id"]).toMatch(uuid);
    expect(response.json()).toEqual({ id: response.headers["x-request-id"] });
  });

  it("gives every request a different generated id", async () => {
    const first = await app.inject({ method: "GET", url: "/hello" });
    const second = await app.inject({ method: "GET", url: "/hello" });
    expect(first.headers["x-request-id"]).not.toBe(second.headers["x-request-id"]);
  });

  it("sends the id on a 404 too", async () => {
    const response = await app.inject({ method: "GET", url: "/nowhere", headers: { "x-request-id": "probe-404" } });
    expect(response.statusCode).toBe(404);
    expect(response.headers["x-request-id"]).toBe("probe-404");
  });

  it("labels every log line of the request with request_id", async () => {
    log.lines.length = 0;
    await app.inject({ method: "GET", url: "/hello?x=1", headers: { "x-request-id": "traced-request" } });
    const entries = log.entries();
    expect(entries.map((entry) => entry["msg"])).toEqual(["incoming request", "handling hello", "request completed"]);
    for (const entry of entries) expect(entry["request_id"]).toBe("traced-request");
  });
});

describe("probe requests", () => {
  it("are not logged line by line", async () => {
    const probed = Fastify({ ...requestIdServerOptions(), logger: serviceLoggerOptions({ stream: log }) });
    probed.get("/healthcheck/live", async () => ({ status: "ok" }));
    log.lines.length = 0;
    expect((await probed.inject({ method: "GET", url: "/healthcheck/live" })).statusCode).toBe(200);
    expect(log.lines).toEqual([]);
    await probed.close();
  });
});
