import { writeFile } from "node:fs/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { aggregateMismatches, storedStateDigest } from "../support/consistency.js";
import { baseData, block, COURSE, load, NO_STRUCTURE_COURSE, OTHER_COURSE } from "../support/data.js";
import { requestsFor, routesOf, SchemaValues, type FuzzCaller, type FuzzRequest, type OpenApiDocument } from "../support/fuzz-requests.js";
import { useHarness } from "../support/harness.js";

/**
 * Property-based fuzzing of every route of the OpenAPI document. Each run
 * sends a few requests derived from the route schemas, plausible or spoiled
 * (see `fuzz-requests.ts`), from callers with and without permissions, and
 * checks that none is answered with a 5xx, that every refusal is the usual
 * `{"detail": …}`, that a refused request changed nothing stored, and, after
 * the run, that every stored aggregate still equals a recomputation from
 * scratch. The state carries over from run to run, as on a live service.
 *
 * `FUZZ_RUNS` (default 500, about 1,200 requests) and `FUZZ_SEED` (default fixed) set the size and
 * the seed; `FUZZ_REPORT` names a file for the figures as JSON
 * (`scripts/fuzz-completion.mjs` runs a larger one and prints them).
 */

const RUNS = Number(process.env["FUZZ_RUNS"] ?? 500);
const SEED = Number(process.env["FUZZ_SEED"] ?? 20260601);
const REPORT = process.env["FUZZ_REPORT"];

const h = await useHarness();

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
  return `${request.method} ${request.url.slice(0, 300)} as ${request.caller} (${request.contentType ?? "no content type"}) ${payload}`;
}

describe("every route, fuzzed", () => {
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
      const tokens: Record<FuzzCaller, string | null> = {
        staff: `Bearer ${(await h.signon.tokenFor("fuzz-staff@example.com", ["staff"], { apiUser: true })).token}`,
        admin: `Bearer ${(await h.signon.tokenFor("fuzz-admin@example.com", ["admin"])).token}`,
        learner: `Bearer ${(await h.signon.tokenFor("ada@example.com")).token}`,
        masquerade: `Bearer ${(await h.signon.tokenFor("fuzz-support@example.com", ["masquerade"])).token}`,
        none: null,
        "unknown-token": `Bearer ${"0".repeat(64)}`,
        "malformed-header": "Basic Zm9vOmJhcg==",
      };
      // Link the learner's Sign-on account now, so that no later request does it on first sight.
      expect((await h.app.inject({ method: "GET", url: "/api/completion/v1/course/", headers: { authorization: tokens.learner! } })).statusCode).toBe(200);

      const document = (await h.app.inject({ method: "GET", url: "/api/completion/v1/openapi.json" })).json<OpenApiDocument>();
      const routes = routesOf(document);
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
      };
      const values = new SchemaValues(document, vocabulary);
      const requests = fc.oneof(...routes.map((route) => requestsFor(route, values, vocabulary)));

      const figures: FuzzFigures = { seed: SEED, runs: RUNS, requests: 0, byStatusClass: {}, byRoute: {}, refusals: {}, examples: {} };
      for (const route of routes) figures.byRoute[route.name] = {};
      let digest = await storedStateDigest(h.ctx);

      const property = fc.asyncProperty(fc.array(requests, { minLength: 1, maxLength: 4 }), async (batch) => {
        for (const request of batch) {
          const headers: Record<string, string> = {};
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
          const after = await storedStateDigest(h.ctx);
          if (response.statusCode >= 400) {
            const body = response.json<{ detail: string }>();
            expect(body, context).toEqual({ detail: expect.any(String) });
            const reason = `${response.statusCode} ${body.detail.replace(/:.*/s, ":…").slice(0, 60)}`;
            figures.refusals[reason] = (figures.refusals[reason] ?? 0) + 1;
            figures.examples[reason] ??= context;
            expect(after, `a refused request changed stored data: ${context}`).toBe(digest);
          }
          digest = after;
        }
        expect(await aggregateMismatches(h.ctx), `after ${batch.map(describeRequest).join("\n")}`).toEqual([]);
      });
      try {
        await fc.assert(property, { numRuns: RUNS, seed: SEED, endOnFailure: true });
      } finally {
        const refusals = Object.fromEntries(Object.entries(figures.refusals).sort(([, a], [, b]) => b - a));
        if (REPORT !== undefined) await writeFile(REPORT, JSON.stringify({ ...figures, refusals }, null, 2));
      }

      // The runs reached every route of the document, and not only with refusals.
      expect(Object.entries(figures.byRoute).filter(([, classes]) => (classes["2xx"] ?? 0) === 0).map(([name]) => name)).toEqual([]);
    },
    Math.max(120_000, RUNS * 2_000),
  );
});
