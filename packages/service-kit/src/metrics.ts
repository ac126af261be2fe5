import type { FastifyInstance } from "fastify";
import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";
import { bearerTokenMatches } from "./bearer-token.js";

/** Options of {@link registerMetrics}. */
export interface MetricsOptions {
  /**
   * When set, `/metrics` answers only requests with `Authorization: Bearer <token>`
   * (401 otherwise). When `null`, it is open to whoever reaches the port.
   */
  token: string | null;
  /** Collect prom-client's default process and Node.js metrics (default true). */
  processMetrics?: boolean;
}

/** The route label of a request that matched no route: never the raw URL, whose values are unbounded. */
export const UNMATCHED_ROUTE = "unmatched";

/** Latency buckets in seconds: from a cached read to a slow bulk import. */
const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Adds Prometheus metrics to an application and serves them at `GET /metrics`:
 *
 * - `http_requests_total{method,route,status}`: responses sent;
 * - `http_request_duration_seconds{method,route,status}`: time from request to response;
 * - with `processMetrics`, prom-client's default metrics (`process_*`, `nodejs_*`).
 *
 * `route` is the route pattern (`/api/completion/v1/course/*`), or
 * `unmatched`. Each call makes its own `Registry`, so several applications in
 * one process keep their figures apart; register service metrics on the
 * returned registry. Call it on the context that holds the routes to count.
 */
export function registerMetrics(app: FastifyInstance, options: MetricsOptions): Registry {
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  const labelNames = ["method", "route", "status"] as const;
  const requests = new Counter({ name: "http_requests_total", help: "HTTP responses sent, by method, route pattern and status", labelNames, registers: [registry] });
  const duration = new Histogram({
    name: "http_request_duration_seconds",
    help: "Time from receiving an HTTP request to sending its response, in seconds",
    labelNames,
    buckets: latencyBuckets,
    registers: [registry],
  });

  // Each label set's series, looked up once: prom-client would otherwise hash the labels twice on every response.
  const series = new Map<string, { requests: Counter.Internal; duration: Histogram.Internal<(typeof labelNames)[number]> }>();
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let found = series.get(key);
    if (found === undefined) {
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      found = { requests: requests.labels(labels), duration: duration.labels(labels) };
      series.set(key, found);
    }
    found.requests.inc();
    found.duration.observe(reply.elapsedTime / 1000);
    done();
  });

  const token = options.token;
  app.get("/metrics", async (request, reply) => {
    if (token !== null && !bearerTokenMatches(request.headers.authorization, token)) {
      return reply.code(401).header("www-authenticate", 'Bearer realm="metrics"').send({ error: "unauthorized" });
    }
    const text = await registry.metrics();
    return reply.header("content-type", registry.contentType).header("cache-control", "no-store").send(text);
  });
  return registry;
}
