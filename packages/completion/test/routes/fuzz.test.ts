import { writeFile } from "node:fs/promises";
import fc from "fast-check";
import type { LightMyRequestResponse, RouteOptions } from "fastify";
import { describe, expect, it } from "vitest";
import { startStaleWorker } from "../../src/aggregation/stale-worker.js";
import { aggregateMismatches, storedStateDigest } from "../support/consistency.js";
import { baseData, block, COURSE, load, NO_STRUCTURE_COURSE, OTHER_COURSE } from "../support/data.js";
import { fuzzRoutes, requestsFor, SchemaValues, type FuzzCaller, type FuzzRequest, type FuzzRoute, type OpenApiDocument } from "../support/fuzz-requests.js";
import { useHarness } from "../support/harness.js";
import { COMPLETION_APP } from "../support/real-signon.js";

/**
 * Property-based fuzzing of every route the app registers (an `onRoute` hook
 * collects them): the routes of the OpenAPI document, the document itself,
 * the health checks, `/metrics` and Sign-on's push receivers. Each run sends
 * a few requests derived from the route schemas, plausible or spoiled (see
 * `fuzz-requests.ts`), from callers with and without permissions (for the
 * push receivers, with and without Sign-on's push credential; for `/metrics`,
 * with and without its token), and checks that none is answered with a 5xx,
 * that every refusal has its route's documented body, that a refused request,
 * or any request to a route that stores nothing, changed nothing stored, and,
 * after the run, that every stored aggregate still equals a recomputation
 * from scratch and that the service still answers. The state carries over
 * from run to run, as on a live service.
 *
 * `FUZZ_RUNS` (default 350, about 850 requests over the 19 routes) and `FUZZ_SEED` (default fixed) set
 * the size and the seed; `FUZZ_REPORT` names a file for the figures as JSON
 * (`scripts/fuzz-completion.mjs` runs a larger one and prints them).
 *
 * With `FUZZ_CONCURRENCY` above 1, each run sends that many requests at once,
 * while the stale worker runs, as on a busy service: every answer must still
 * be below 500 with its route's documented body, and aggregates must equal a
 * recomputation after every run; what one request changed can no longer be
 * told from what another did, so the checks of stored data per request are
 * left out.
 */

const RUNS = Number(process.env["FUZZ_RUNS"] ?? 350);
const SEED = Number(process.env["FUZZ_SEED"] ?? 20260601);
const REPORT = process.env["FUZZ_REPORT"];
const CONCURRENCY = Number(process.env["FUZZ_CONCURRENCY"] ?? 1);

const METRICS_TOKEN = "fuzz-metrics-token-0123456789abcdef";
const registered: RouteOptions[] = [];
// As `server.ts` runs it: Sign-on's answers about a token reused for a while (the tokens' permissions do not change
// during the runs), which the pushes drop.
const h = await useHarness({
  callerCacheSeconds: 30,
  signonPushes: true,
  app: { metricsToken: METRICS_TOKEN, onRoute: (route) => void registered.push(route) },
});

/** The figures of a fuzz run: requests by route and status class. */
interface FuzzFigures {
  seed: number;
  runs: number;
  requests: number;
  byStatusClass: Record<string, number>;
  byRoute: Record<string, Record<string, number>>;
  /** Refusals by status and the start of their detail, most frequent first in the report. */
  refusals: Record<string, number>;
  /** The first request refused for each reason, to see what the runs tried. */
  examples: Record<string, string>;
}

function describeRequest(request: FuzzRequest): string {
  const payload = request.payload === null ? "" : request.payload.toString().slice(0, 300);
  const encoding = request.headers["content-encoding"] === undefined ? "" : `, content-encoding ${request.headers["content-encoding"]}`;
  return `${request.method} ${request.url.slice(0, 300)} as ${request.caller} (${request.contentType ?? "no content type"}${encoding}) ${payload}`;
}

function jsonObject(body: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const isDetail = (body: Record<string, unknown> | null): body is { detail: string } =>
  body !== null && typeof body["detail"] === "string" && Object.keys(body).length === 1;

/**
 * The reason of a refusal for the report when it has its route's documented
 * body, else null. Answers given before a route is chosen (no route matches,
 * a path that does not decode, a path parameter too long) are the API's
 * `{"detail": …}` everywhere.
 */
function documentedRefusal(route: FuzzRoute, method: string, response: LightMyRequestResponse): string | null {
  if (method === "HEAD") return response.body === "" ? "(HEAD)" : null;
  const body = jsonObject(response.body);
  const status = response.statusCode;
  if (isDetail(body) && ((status === 404 && body.detail === "Not found.") || status === 414 || body.detail === "Invalid percent-encoding in the path.")) return body.detail;
  switch (route.refusal) {
    case "detail":
      return isDetail(body) ? body.detail : null;
    case "metrics":
      if (status === 401 && JSON.stringify(body) === '{"error":"unauthorized"}') return "unauthorized";
      return isDetail(body) ? body.detail : null;
    case "signon-client": {
      const { error, error_description: description } = (body ?? {}) as Record<string, unknown>;
      const shaped = typeof error === "string" && /^[a-z_]+$/.test(error) && typeof description === "string" && Object.keys(body!).length === 2;
      return shaped ? `${error}: ${description}` : null;
    }
  }
}

describe("every route, fuzzed", () => {
  it("fails for a route it cannot fill, so a new route gets a vocabulary", () => {
    const document: OpenApiDocument = { paths: { "/api/completion/v1/widgets/": { get: {} } } };
    const route = (method: string, url: string, schema: Record<string, unknown> = {}) => ({ method, url, schema });
    expect(() => fuzzRoutes([route("GET", "/api/completion/v1/widgets/")], document)).not.toThrow();
    expect(() => fuzzRoutes([route("GET", "/api/completion/v1/widgets/"), route("GET", "/api/completion/v1/gadgets/")], document)).toThrow(
      "GET /api/completion/v1/gadgets/: neither in the OpenAPI document nor in the fuzz test's UNDOCUMENTED_ROUTES",
    );
    expect(() => fuzzRoutes([route("GET", "/api/completion/v1/widgets/"), route("GET", "/auth/gds/api/groups/:groupId")], document)).toThrow(
      "GET /auth/gds/api/groups/:groupId: the path parameter groupId is unknown to the fuzz test",
    );
    expect(() => fuzzRoutes([route("GET", "/api/completion/v1/widgets/"), route("DELETE", "/auth/gds/api/users/:uid")], document)).toThrow(
      "DELETE /auth/gds/api/users/:uid: a method the fuzz test does not send",
    );
    expect(() => fuzzRoutes([route("GET", "/api/completion/v1/widgets/"), route("GET", "/metrics", { querystring: { type: "object", patternProperties: { "^(.*)$": { type: "string" } } } })], document)).toThrow(
      "GET /metrics: an open query schema whose fields the fuzz test does not know",
    );
    expect(() => fuzzRoutes([], document)).toThrow("GET /api/completion/v1/widgets/: in the OpenAPI document, but no route registered serves it");
  });

  it(
    `answers ${RUNS} runs of hostile requests without a 5xx or a half-written change`,
    async () => {
      await load(h.ctx, {
        ...baseData(),
        completions: [
          { username: "ada", course_key: COURSE, block_key: block("problem", "p1"), completion: 1 },
          { username: "bob", course_key: COURSE, block_key: block("html", "h1"), completion: 0.5 },
          { username: "bob", course_key: OTHER_COURSE, block_key: "i4x://TesseraX/CS102/html/page", completion: 1 },
        ],
      });
      // Sign-on's push credential: an API user holding `user_update_permission`, which only Sign-on itself grants.
      const push = await h.signon.tokenFor("fuzz-push@example.com", [], { apiUser: true });
      await h.database.pool.query(
        `insert into signon.user_permissions (user_uid, application_id, permission, created_at)
         select $1, id, 'user_update_permission', now() from signon.applications where name = $2`,
        [push.uid, COMPLETION_APP],
      );
      const staff = await h.signon.tokenFor("fuzz-staff@example.com", ["staff"], { apiUser: true });
      const admin = await h.signon.tokenFor("fuzz-admin@example.com", ["admin"]);
      const learner = await h.signon.tokenFor("ada@example.com");
      const masquerade = await h.signon.tokenFor("fuzz-support@example.com", ["masquerade"]);
      const tokens: Record<FuzzCaller, string | null> = {
        staff: `Bearer ${staff.token}`,
        admin: `Bearer ${admin.token}`,
        learner: `Bearer ${learner.token}`,
        masquerade: `Bearer ${masquerade.token}`,
        push: `Bearer ${push.token}`,
        metrics: `Bearer ${METRICS_TOKEN}`,
        none: null,
        "unknown-token": `Bearer ${"0".repeat(64)}`,
        "oversized-token": `Bearer ${"A".repeat(20_000)}`,
        "malformed-header": "Basic Zm9vOmJhcg==",
        "latin1-header": "Bearer tökén",
      };
      // Link the learner's Sign-on account now, so that no later request does it on first sight.
      expect((await h.app.inject({ method: "GET", url: "/api/completion/v1/course/", headers: { authorization: tokens.learner! } })).statusCode).toBe(200);

      const document = (await h.app.inject({ method: "GET", url: "/api/completion/v1/openapi.json" })).json<OpenApiDocument>();
      const routes = fuzzRoutes(registered, document);
      const vocabulary = {
        usernames: ["ada", "bob", "cy", "dee", "staffer"],
        emails: ["ada@example.com", "bob@example.com", "fuzz-support@example.com"],
        courseKeys: [COURSE, OTHER_COURSE, NO_STRUCTURE_COURSE],
        blockKeys: [
          ...["p1", "h1", "p2", "vid1", "x1", "hidden1"].map((id) => block(id === "vid1" ? "video" : id === "h1" ? "html" : "problem", id)),
          ...["ch1", "ch2"].map((id) => block("chapter", id)),
          block("sequential", "s1"),
          "i4x://TesseraX/CS101/problem/p2",
          "i4x://TesseraX/CS102/html/page",
        ],
        roles: ["staff", "beta_testers"],
        cohortIds: [10, 11, 12],
        users: baseData().users!.map(({ id, username, email }) => ({ id, username, email })),
        signonUids: [staff, admin, learner, masquerade, push].map(({ uid }) => uid),
        blocksByCourse: { [COURSE]: ["p1", "h1", "p2", "vid1", "x1"].map((id) => block(id === "vid1" ? "video" : id === "h1" ? "html" : "problem", id)), [OTHER_COURSE]: ["i4x://TesseraX/CS102/html/page"] },
      };
      const values = new SchemaValues(document, vocabulary);
      const requests = fc.oneof(...routes.map((route) => ({ arbitrary: requestsFor(route, values, vocabulary), weight: route.weight })));
      const routeNamed = new Map(routes.map((route) => [route.name, route]));

      const figures: FuzzFigures = { seed: SEED, runs: RUNS, requests: 0, byStatusClass: {}, byRoute: {}, refusals: {}, examples: {} };
      for (const route of routes) figures.byRoute[route.name] = {};
      let digest = await storedStateDigest(h.ctx);
      const concurrent = CONCURRENCY > 1;

      const send = async (request: FuzzRequest): Promise<void> => {
        const route = routeNamed.get(request.route)!;
        const headers: Record<string, string> = { ...request.headers };
        const authorization = tokens[request.caller];
        if (authorization !== null) headers["authorization"] = authorization;
        if (request.contentType !== null) headers["content-type"] = request.contentType;
        const response = await h.app.inject({
          method: request.method,
          url: request.url,
          headers,
          ...(request.payload === null ? {} : { payload: request.payload }),
        });
        const statusClass = `${Math.floor(response.statusCode / 100)}xx`;
        figures.requests += 1;
        figures.byStatusClass[statusClass] = (figures.byStatusClass[statusClass] ?? 0) + 1;
        const byRoute = figures.byRoute[request.route]!;
        byRoute[statusClass] = (byRoute[statusClass] ?? 0) + 1;

        const context = `${describeRequest(request)}\n→ ${response.statusCode} ${response.body.slice(0, 300)}`;
        expect(response.statusCode, context).toBeLessThan(500);
        // Requests sent at once: what one changed cannot be told from what another did.
        const after = concurrent ? digest : await storedStateDigest(h.ctx);
        if (response.statusCode >= 400) {
          const refusal = documentedRefusal(route, request.method, response);
          expect(refusal, `a refusal without its route's documented body: ${context}`).not.toBeNull();
          const reason = `${response.statusCode} ${refusal!.replace(/:.*/s, ":…").slice(0, 60)}`;
          figures.refusals[reason] = (figures.refusals[reason] ?? 0) + 1;
          figures.examples[reason] ??= context;
          expect(after, `a refused request changed stored data: ${context}`).toBe(digest);
        }
        if (!route.writes) expect(after, `a request to a route that stores nothing changed stored data: ${context}`).toBe(digest);
        digest = after;
      };
      const property = fc.asyncProperty(fc.array(requests, concurrent ? { minLength: CONCURRENCY, maxLength: CONCURRENCY } : { minLength: 1, maxLength: 4 }), async (batch) => {
        if (concurrent) await Promise.all(batch.map(send));
        else for (const request of batch) await send(request);
        expect(await aggregateMismatches(h.ctx), `after ${batch.map(describeRequest).join("\n")}`).toEqual([]);
      });
      const workerErrors: unknown[] = [];
      const worker = concurrent ? startStaleWorker(h.ctx, { intervalMs: 5, onError: (error) => void workerErrors.push(error) }) : null;
      try {
        await fc.assert(property, { numRuns: RUNS, seed: SEED, endOnFailure: true });
      } finally {
        await worker?.stop();
        const refusals = Object.fromEntries(Object.entries(figures.refusals).sort(([, a], [, b]) => b - a));
        if (REPORT !== undefined) await writeFile(REPORT, JSON.stringify({ ...figures, refusals }, null, 2));
      }
      expect(workerErrors.map(String)).toEqual([]);

      // The service still answers: its probes, a read, and a push.
      expect((await h.app.inject({ method: "GET", url: "/healthcheck/live" })).statusCode).toBe(200);
      expect((await h.app.inject({ method: "GET", url: "/healthcheck/ready" })).statusCode).toBe(200);
      // (The runs may have removed any learner or course: the caller's own list answers whatever is stored.)
      expect((await h.app.inject({ method: "GET", url: "/api/completion/v1/course/", headers: { authorization: tokens.learner! } })).statusCode).toBe(200);
      expect((await h.app.inject({ method: "POST", url: `/auth/gds/api/users/${learner.uid}/reauth`, headers: { authorization: tokens.push! } })).statusCode).toBe(200);
      // The runs reached every route, and not only with refusals.
      expect(Object.entries(figures.byRoute).filter(([, classes]) => (classes["2xx"] ?? 0) === 0).map(([name]) => name)).toEqual([]);
    },
    Math.max(120_000, RUNS * 2_000),
  );
});
