import { useTestDatabase } from "@tessera/db/testing";
import { ManualClock, StandInSignon } from "@tessera/signon-client/testing";
import { afterAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { SignonCallerResolver } from "../../src/auth/signon-caller-resolver.js";
import { DEFAULT_AGGREGATOR_TYPES, DEFAULT_CALLER_STALE_SECONDS } from "../../src/config.js";
import { createContext } from "../../src/context.js";
import { COMPLETION_MIGRATIONS } from "../../src/db/database.js";
import * as schema from "../../src/db/schema.js";

// Completion checking bearer tokens at a stand-in Sign-on (a real HTTP server on 127.0.0.1) that the test makes
// answer 503, as Sign-on does while its database fails over, or drop connections; the caller cache's clock is the
// test's. A caller resolved before the outage keeps reading for COMPLETION_CALLER_STALE_SECONDS past the cache time.
const database = await useTestDatabase({ migrations: [COMPLETION_MIGRATIONS], schema, label: "completion_signon_outage" });
const clock = new ManualClock();
const client = { clientId: "completion-client-id", clientSecret: "unused", redirectUri: "http://127.0.0.1:3001/auth/gds/callback" };
const signon = new StandInSignon({ client, clock });
await signon.listen();
const callers = new SignonCallerResolver({ signonUrl: signon.url, clientId: client.clientId, cacheSeconds: 30, staleSeconds: DEFAULT_CALLER_STALE_SECONDS, clock });
const ctx = createContext({ aggregatorTypes: DEFAULT_AGGREGATOR_TYPES, rebuildStaleFromScratch: false, preparedStatements: true }, database.db, callers);
const app = await buildApp(ctx, { signonPushes: callers.verifier });
await app.ready();
afterAll(async () => {
  await app.close();
  await signon.close();
  await database.close();
});

let users = 0;
/** A staff caller's token: Sign-on holds the user with `signin` and `staff` on completion. */
function staffToken(): { uid: string; token: string } {
  users += 1;
  const uid = `00000000-0000-4000-8000-${String(users).padStart(12, "0")}`;
  signon.addUser({ uid, name: `Staff ${users}`, email: `staff${users}@example.org`, permissions: ["signin", "staff"], disabled: false });
  return { uid, token: signon.issueApiToken(uid) };
}

/** A staff caller reading a learner who does not exist gets 404; one Sign-on refuses 401; no answer from Sign-on 503. */
async function read(token: string) {
  return app.inject({ method: "GET", url: "/api/completion/v1/course/?username=nobody-here", headers: { authorization: `Bearer ${token}` } });
}

async function staleAnswersOnMetrics(): Promise<string | undefined> {
  const body = (await app.inject({ method: "GET", url: "/metrics" })).body;
  return /^completion_callers_served_stale_total (\d+)$/m.exec(body)?.[1];
}

describe("Completion's reads while Sign-on cannot answer", () => {
  it.each(["unavailable", "dropped"] as const)("go on for a caller resolved before, while Sign-on is %s, until the stale bound", async (outage) => {
    const { token } = staffToken();
    expect((await read(token)).statusCode).toBe(404);
    const staleBefore = callers.staleAnswers;
    signon.userInfoOutage = outage;
    try {
      // A failover at the documented settings: 30 to 40 s of 503. The cached answer expires at 30 s.
      for (const seconds of [31, 10, 10, 10]) {
        clock.advanceSeconds(seconds);
        expect((await read(token)).statusCode).toBe(404);
      }
      expect(callers.staleAnswers - staleBefore).toBe(4);
      expect(Number(await staleAnswersOnMetrics())).toBe(callers.staleAnswers);
      // A caller never resolved before has nothing to stand in: 503, as before.
      const unknown = await read(staffToken().token);
      expect(unknown.statusCode).toBe(503);
      expect(unknown.json()).toEqual({ detail: "The sign-on service is unavailable; try again later." });
      // Past 30 s of cache and 300 s of staleness since Sign-on last answered: 503.
      clock.advanceSeconds(30 + DEFAULT_CALLER_STALE_SECONDS - 61);
      expect((await read(token)).statusCode).toBe(503);
    } finally {
      signon.userInfoOutage = null;
    }
  });

  it("takes Sign-on's answer as soon as it comes: a token revoked meanwhile is refused", async () => {
    const { uid, token } = staffToken();
    expect((await read(token)).statusCode).toBe(404);
    signon.userInfoOutage = "unavailable";
    clock.advanceSeconds(31);
    expect((await read(token)).statusCode).toBe(404);
    signon.userInfoOutage = null;
    signon.revokeTokensOf(uid);
    clock.advanceSeconds(5);
    expect((await read(token)).statusCode).toBe(401);
    signon.userInfoOutage = "unavailable";
    clock.advanceSeconds(31);
    expect((await read(token)).statusCode).toBe(503);
    signon.userInfoOutage = null;
  });

  it("gives nothing stale of a caller a push has dropped (a suspension, a permission revoked)", async () => {
    const { uid, token } = staffToken();
    expect((await read(token)).statusCode).toBe(404);
    signon.userInfoOutage = "unavailable";
    // What Sign-on's push receivers do on a push about the user.
    expect(callers.verifier.forgetUser(uid)).toBe(1);
    expect((await read(token)).statusCode).toBe(503);
    signon.userInfoOutage = null;
  });
});
