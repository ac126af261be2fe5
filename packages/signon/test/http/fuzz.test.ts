import { writeFile } from "node:fs/promises";
import fc from "fast-check";
import Fastify, { type LightMyRequestResponse, type RouteOptions } from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import signonApp, { signonServerOptions } from "../../src/app.js";
import { statementRunner } from "../../src/db/statements.js";
import { fuzzRoutes, requestsFor } from "../support/fuzz-requests.js";
import { defaultPassword, FuzzScenario, type SentRequest } from "../support/fuzz-scenario.js";
import { auditActionsAfter, inconsistencies, initialRows, lastAuditEventId, REFUSAL_AUDIT_ACTIONS, storedStateDigest } from "../support/fuzz-state.js";
import { TestClock } from "../support/clock.js";
import { openTestDatabase, testConfig } from "../support/signon.js";

/**
 * Property-based fuzzing of every route Sign-on registers. Each run sends a
 * few requests derived from the route schemas (see `fuzz-requests.ts`),
 * plausible or spoiled, without a session, with a visitor's CSRF cookie, and
 * signed in as a superadmin or a normal user with a valid CSRF token; OAuth
 * endpoints get the client's credentials and the codes and tokens earlier
 * responses handed out. It checks that none is answered with a 5xx, that a
 * refused request (4xx) changed nothing stored and recorded only failures in
 * the audit log, and after the runs that the audit log agrees with the
 * stored data, the service still answers, a full OAuth flow still works and
 * an administrator no request targeted can still sign in. The state carries
 * over from run to run, as on a live service.
 *
 * `FUZZ_RUNS` (default 300, about 750 requests: some ten for each route, so
 * every route is reached) and `FUZZ_SEED` (default
 * fixed) set the size and the seed; `FUZZ_REPORT` names a file for the
 * figures as JSON (`scripts/fuzz-signon.mjs` runs a larger one and prints them).
 */

const RUNS = Number(process.env["FUZZ_RUNS"] ?? 300);
const SEED = Number(process.env["FUZZ_SEED"] ?? 20261125);
const REPORT = process.env["FUZZ_REPORT"];

const database = await openTestDatabase();
const registered: RouteOptions[] = [];
const config = { ...testConfig(), preparedStatements: true };
const clock = new TestClock();
const app = Fastify(signonServerOptions(config, false));
app.addHook("onRoute", (route) => {
  registered.push(route);
});
await app.register(signonApp, { config, db: database.db, pool: database.pool, now: clock.now });
await app.ready();
const ctx = { db: database.db, statements: statementRunner(database.pool, config.preparedStatements), config, now: clock.now };
afterAll(async () => {
  await app.close();
  await database.close();
});

/** The figures of a fuzz run: requests by route and status class, and the refusals seen. */
interface FuzzFigures {
  seed: number;
  runs: number;
  requests: number;
  byStatusClass: Record<string, number>;
  byRoute: Record<string, Record<string, number>>;
  refusals: Record<string, number>;
  examples: Record<string, string>;
}

function describeRequest(request: SentRequest, caller: string): string {
  const payload = request.payload === null ? "" : request.payload.toString().slice(0, 300);
  return `${request.method} ${request.url.slice(0, 300)} as ${caller} (${request.headers["content-type"] ?? "no content type"}) ${payload}`;
}

/** A refusal's reason for the report: the OAuth error, or the page's heading. */
function reasonOf(status: number, body: string): string {
  const oauth = /"error":"([^"]*)"(?:,"error_description":"([^"]{0,60})")?/.exec(body);
  if (oauth) return `${status} ${oauth[1]}${oauth[2] ? `: ${oauth[2]}` : ""}`;
  const heading = /<h1[^>]*>([^<]{0,60})/.exec(body);
  return `${status} ${heading?.[1]?.trim() ?? body.slice(0, 40)}`;
}

/**
 * Whether a refusal has the service's shape: an HTML page, or JSON with only
 * `error` (a code in lower case) and `error_description`; never Fastify's
 * default body (`statusCode`, `code`, `message`).
 */
function serviceErrorShape(method: string, response: LightMyRequestResponse): boolean {
  const type = String(response.headers["content-type"] ?? "");
  if (type.startsWith("text/html")) return true;
  if (!type.startsWith("application/json")) return false;
  if (method === "HEAD") return true;
  const body = response.json<Record<string, unknown>>();
  return typeof body["error"] === "string" && /^[a-z_]+$/.test(body["error"]) && Object.keys(body).every((key) => key === "error" || key === "error_description");
}

describe("every route, fuzzed", () => {
  it("knows every registered route", () => {
    const routes = fuzzRoutes(registered);
    expect(routes.map((route) => route.name)).toEqual(expect.arrayContaining(["GET /oauth/authorize", "POST /oauth/token", "GET /user.json", "POST /users/:uid/permissions"]));
  });

  it("fails for a route it cannot make plausible requests for, so a new route gets a vocabulary", () => {
    const route = (method: string, url: string, schema?: object) => ({ method, url, schema, handler: () => undefined }) as unknown as RouteOptions;
    expect(() => fuzzRoutes([route("GET", "/widgets/:widgetId")])).toThrow("GET /widgets/:widgetId: the path parameter widgetId is unknown to the fuzz test");
    expect(() => fuzzRoutes([route("GET", "/search", { querystring: { type: "object", patternProperties: { "^(.*)$": { type: "string" } } } })])).toThrow(
      "GET /search: an open query schema whose fields the fuzz test does not know",
    );
    expect(() => fuzzRoutes([route("DELETE", "/users/:uid")])).toThrow("DELETE /users/:uid: a method the fuzz test does not send");
  });

  it(
    `answers ${RUNS} runs of hostile requests without a 5xx or a half-written change`,
    async () => {
      const routes = fuzzRoutes(registered);
      const scenario = await FuzzScenario.create(app, ctx, clock);
      const before = await initialRows(ctx);
      const requests = fc.oneof(...routes.map((route) => requestsFor(route, defaultPassword)));

      const figures: FuzzFigures = { seed: SEED, runs: RUNS, requests: 0, byStatusClass: {}, byRoute: {}, refusals: {}, examples: {} };
      for (const route of routes) figures.byRoute[route.name] = {};
      let digest = await storedStateDigest(ctx);
      let auditId = await lastAuditEventId(ctx);

      const property = fc.asyncProperty(fc.array(requests, { minLength: 1, maxLength: 4 }), async (batch) => {
        for (const generated of batch) {
          const request = await scenario.prepare(generated);
          const response = await scenario.send(request);
          const statusClass = `${Math.floor(response.statusCode / 100)}xx`;
          figures.requests += 1;
          figures.byStatusClass[statusClass] = (figures.byStatusClass[statusClass] ?? 0) + 1;
          const byRoute = figures.byRoute[generated.route]!;
          byRoute[statusClass] = (byRoute[statusClass] ?? 0) + 1;

          const context = `${describeRequest(request, generated.caller)}\n→ ${response.statusCode} ${response.body.slice(0, 300)}`;
          expect(response.statusCode, context).toBeLessThan(500);
          const after = await storedStateDigest(ctx);
          const actions = await auditActionsAfter(ctx, auditId);
          if (response.statusCode >= 400) {
            expect(serviceErrorShape(request.method, response), `a refusal not in the service's error shape: ${context}`).toBe(true);
            const reason = reasonOf(response.statusCode, response.body);
            figures.refusals[reason] = (figures.refusals[reason] ?? 0) + 1;
            figures.examples[reason] ??= context;
            expect(after.accounts, `a refused request changed stored data: ${context}`).toBe(digest.accounts);
            // A replayed code or refresh token is refused and revokes what it was issued with (RFC 6819 §4.4.1.1).
            if (!/^POST \/(token|oauth\/(token|access_token))$/.test(generated.route) || !response.body.includes('"invalid_grant"')) {
              expect(after.tokens, `a refused request changed tokens: ${context}`).toBe(digest.tokens);
            }
            expect(actions.filter((action) => !REFUSAL_AUDIT_ACTIONS.has(action)), `a refused request wrote audit events: ${context}`).toEqual([]);
          }
          digest = after;
          auditId = await lastAuditEventId(ctx);
        }
        // Time passes between runs, as on a live service: brute-force windows (10 minutes) end, codes and tokens expire.
        clock.advance(5);
        // Signing a caller in again (after a sign-out form, say) is the harness's doing, not a request's.
        await scenario.keepSignedIn();
        digest = await storedStateDigest(ctx);
        auditId = await lastAuditEventId(ctx);
      });
      try {
        await fc.assert(property, { numRuns: RUNS, seed: SEED, endOnFailure: true });
      } finally {
        const refusals = Object.fromEntries(Object.entries(figures.refusals).sort(([, a], [, b]) => b - a));
        if (REPORT !== undefined) await writeFile(REPORT, JSON.stringify({ ...figures, refusals }, null, 2));
      }

      // Stored data and the audit log agree, and the service still works for everyone.
      expect(await inconsistencies(ctx, before)).toEqual([]);
      expect((await app.inject({ method: "GET", url: "/healthcheck/live" })).statusCode).toBe(200);
      expect((await app.inject({ method: "GET", url: "/healthcheck/ready" })).statusCode).toBe(200);
      expect(await scenario.keeperSignsIn()).toBe(true);
      // Every route was reached.
      expect(Object.entries(figures.byRoute).filter(([, classes]) => Object.keys(classes).length === 0).map(([name]) => name)).toEqual([]);
    },
    Math.max(120_000, RUNS * 1_000),
  );
});
