import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { ManualClock, StandInSignon } from "@tessera/signon-client/testing";
import fc from "fast-check";
import Fastify, { type RouteOptions } from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import editorialApp from "../src/app.js";
import { editorialTestDatabase, freePort } from "./support/editorial-app.js";
import { fuzzRoutes, requestsForAll, type FuzzAuthorization, type FuzzCaller, type FuzzRequest } from "./support/fuzz-requests.js";
import { HttpBrowser } from "./support/http-browser.js";

/**
 * Property-based fuzzing of every route of the editorial application (its
 * pages, the Sign-on routes and the push receivers), against the stand-in
 * Sign-on: requests derived from the route schemas, plausible or spoiled
 * (see `fuzz-requests.ts`), from signed-in editors and admins, nobody, and
 * cookies that name nothing, with Sign-on's push credential, an editor's
 * token or broken ones. No request may get a 5xx or, when refused, change the
 * users stored; afterwards the application still answers and an admin can
 * still sign in and open `/admin`.
 *
 * `FUZZ_RUNS` (default 150) and `FUZZ_SEED` (default fixed) set the size and
 * the seed; `FUZZ_REPORT` names a file for the figures as JSON.
 */

const RUNS = Number(process.env["FUZZ_RUNS"] ?? 150);
const SEED = Number(process.env["FUZZ_SEED"] ?? 20261125);
const REPORT = process.env["FUZZ_REPORT"];

const database = await editorialTestDatabase();
const port = await freePort();
const client = { clientId: "editorial-app", clientSecret: "editorial-secret", redirectUri: `http://127.0.0.1:${port}/auth/gds/callback` };
const signon = new StandInSignon({ client, clock: new ManualClock() });
await signon.listen();
const registered: RouteOptions[] = [];
const app = Fastify({ logger: false });
app.addHook("onRoute", (route) => {
  registered.push(route);
});
await app.register(editorialApp, { config: { ...client, signonUrl: signon.url, database: { url: database.url } } });
const appUrl = await app.listen({ host: "127.0.0.1", port });
afterAll(async () => {
  await app.close();
  await signon.close();
  await database.close();
});

const users = Array.from({ length: 6 }, (_, n) =>
  signon.addUser({
    uid: `5f0c1d2e-0000-4000-8000-${String(n + 1).padStart(12, "0")}`,
    name: `Editor ${n + 1}`,
    email: `editor${n + 1}@example.org`,
    permissions: n === 0 ? ["signin", "admin"] : ["signin"],
    organisation_slug: "cabinet-office",
    organisation_content_id: "96ae61d6-c2a1-48cb-8e67-da9d105ae381",
    disabled: false,
  }),
);
const pusher = signon.addUser({ uid: "5f0c1d2e-0000-4000-8000-00000000ffff", name: "Sign-on", email: "signon@example.org", permissions: ["signin", "user_update_permission"] });
const [admin, editor] = users as [(typeof users)[number], (typeof users)[number]];

/** Signs `uid` in through the stand-in Sign-on; returns the session cookie. */
async function signIn(uid: string): Promise<string> {
  signon.signedInUid = uid;
  const browser = new HttpBrowser();
  const home = await browser.get(`${appUrl}/`);
  const cookie = browser.cookie(appUrl, "editorial_session");
  if (home.response.status !== 200 || cookie === undefined) throw new Error(`sign-in as ${uid} failed with ${home.response.status}`);
  return `editorial_session=${cookie}`;
}

/** A digest of the users the application stores (sessions are left out: sign-in and sign-out write them on purpose). */
async function storedUsers(): Promise<string> {
  const result = await database.pool.query<{ digest: string | null }>(
    "select md5(coalesce(string_agg(t::text, ',' order by t::text), '')) as digest from (select uid, name, email, permissions, organisation_slug, organisation_content_id, disabled, remotely_signed_out from signon_client.users) t",
  );
  return result.rows[0]?.digest ?? "";
}

describe("every route of the editorial application, fuzzed", () => {
  it(`answers ${RUNS} runs of hostile requests without a 5xx or a refused change`, async () => {
    const routes = fuzzRoutes(registered);
    const sessions: Record<"editor" | "admin", string> = { editor: await signIn(editor.uid), admin: await signIn(admin.uid) };
    const uids = [...users.map((user) => user.uid), pusher.uid, "unknown-uid"];
    const tokens: Record<FuzzAuthorization, string | null> = {
      push: `Bearer ${signon.issueApiToken(pusher.uid)}`,
      "editor-token": `Bearer ${signon.issueApiToken(editor.uid)}`,
      none: null,
      "unknown-token": `Bearer ${"0".repeat(64)}`,
      malformed: "Bearer a b c",
    };
    const cookieOf = (caller: FuzzCaller): string | null =>
      caller === "editor" || caller === "admin" ? sessions[caller] : caller === "stale-cookie" ? `editorial_session=${randomBytes(32).toString("base64url")}` : caller === "junk-cookie" ? "editorial_session=%E0%A4%A; =x" : null;

    const figures = { seed: SEED, runs: RUNS, requests: 0, byStatusClass: {} as Record<string, number>, byRoute: Object.fromEntries(routes.map((route) => [route.name, {} as Record<string, number>])) };
    let digest = await storedUsers();

    const send = async (request: FuzzRequest) => {
      const uid = "known" in request.uid ? encodeURIComponent(uids[request.uid.known % uids.length]!) : request.uid.raw;
      const headers: Record<string, string> = {};
      const cookie = cookieOf(request.caller);
      if (cookie !== null) headers["cookie"] = cookie;
      const authorization = tokens[request.authorization];
      if (authorization !== null) headers["authorization"] = authorization;
      if (request.contentType !== null) headers["content-type"] = request.contentType;
      const bodyUid = "known" in request.uid ? uids[request.uid.known % uids.length]! : "raw-uid";
      const payload = typeof request.payload === "string" ? request.payload.replaceAll("{uid}", bodyUid) : request.payload;
      const url = `${request.path.replace("{uid}", uid)}${request.query === "" ? "" : `?${request.query}`}`;
      const response = await app.inject({ method: request.method, url, headers, ...(payload === null ? {} : { payload }) });
      return { response, description: `${request.method} ${url.slice(0, 300)} as ${request.caller} with ${request.authorization} (${request.contentType ?? "no content type"}) ${String(payload ?? "").slice(0, 300)}` };
    };

    const property = fc.asyncProperty(fc.array(requestsForAll(routes), { minLength: 1, maxLength: 4 }), async (batch) => {
      for (const request of batch) {
        const { response, description } = await send(request);
        const statusClass = `${Math.floor(response.statusCode / 100)}xx`;
        figures.requests += 1;
        figures.byStatusClass[statusClass] = (figures.byStatusClass[statusClass] ?? 0) + 1;
        const byRoute = figures.byRoute[request.route]!;
        byRoute[statusClass] = (byRoute[statusClass] ?? 0) + 1;
        const context = `${description}\n→ ${response.statusCode} ${response.body.slice(0, 300)}`;
        expect(response.statusCode, context).toBeLessThan(500);
        const after = await storedUsers();
        if (response.statusCode >= 400) expect(after, `a refused request changed the stored users: ${context}`).toBe(digest);
        digest = after;
      }
      // A reauth push signs a caller out: sign them in again, as the person would.
      for (const [name, person] of [["editor", editor], ["admin", admin]] as const) {
        if ((await app.inject({ method: "GET", url: "/", headers: { cookie: sessions[name] } })).statusCode !== 200) sessions[name] = await signIn(person.uid);
      }
      digest = await storedUsers();
    });
    try {
      await fc.assert(property, { numRuns: RUNS, seed: SEED, endOnFailure: true });
    } finally {
      if (REPORT !== undefined) await writeFile(REPORT, JSON.stringify(figures, null, 2));
    }

    expect((await app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    const fresh = await signIn(admin.uid);
    expect((await app.inject({ method: "GET", url: "/admin", headers: { cookie: fresh } })).statusCode).toBe(200);
    expect(Object.entries(figures.byRoute).filter(([, classes]) => Object.keys(classes).length === 0).map(([name]) => name)).toEqual([]);
  }, 120_000);
});
