// Stale-if-error: a user Sign-on returned for a token before is still given while Sign-on cannot answer (503, or
// connections dropped), up to bearerStaleIfErrorSeconds past the answer's lifetime, on a clock the test moves. The
// stand-in Sign-on is a real HTTP server on 127.0.0.1.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBearerTokenVerifier, STALE_RETRY_MS, type BearerTokenVerifier } from "../src/bearer/bearer-token-verifier.js";
import { SignonUnavailableError } from "../src/errors.js";
import { ManualClock } from "../src/testing/manual-clock.js";
import { StandInSignon } from "../src/testing/stand-in-signon.js";
import { CLIENT, createUser } from "./support/client-app.js";

let clock: ManualClock;
let signon: StandInSignon;
beforeEach(async () => {
  clock = new ManualClock();
  signon = new StandInSignon({ client: CLIENT, clock });
  await signon.listen();
});
afterEach(() => signon.close());

function verifier(staleSeconds?: number): BearerTokenVerifier {
  return createBearerTokenVerifier({
    signonUrl: signon.url,
    clientId: CLIENT.clientId,
    clock,
    requestTimeoutMs: 2000,
    bearerCacheTtlSeconds: 30,
    ...(staleSeconds === undefined ? {} : { bearerStaleIfErrorSeconds: staleSeconds }),
  });
}

/** A user of this application with a token, and the verifier's answer while Sign-on answers. */
async function resolvedUser(checker: BearerTokenVerifier) {
  const user = signon.addUser(createUser({ permissions: ["editor"] }));
  const token = signon.issueApiToken(user.uid);
  const answered = await checker.verify(token);
  expect(answered?.uid).toBe(user.uid);
  return { user, token, answered };
}

describe.each(["unavailable", "dropped"] as const)("while Sign-on's /user.json is %s", (outage) => {
  it("gives the user it returned before, up to bearerStaleIfErrorSeconds past the answer's lifetime, asking again every few seconds", async () => {
    const checker = verifier(300);
    const { token, answered } = await resolvedUser(checker);
    signon.userInfoOutage = outage;

    clock.advanceSeconds(31);
    expect(await checker.verify(token)).toEqual(answered);
    expect([signon.userInfoRequests, checker.staleAnswers]).toEqual([2, 1]);
    // Within the retry pause it is given without asking, which a Sign-on that hangs would make each request wait for.
    clock.advanceSeconds(STALE_RETRY_MS / 1000 - 1);
    expect(await checker.verify(token)).toEqual(answered);
    expect([signon.userInfoRequests, checker.staleAnswers]).toEqual([2, 2]);
    clock.advanceSeconds(1);
    expect(await checker.verify(token)).toEqual(answered);
    expect([signon.userInfoRequests, checker.staleAnswers]).toEqual([3, 3]);

    // 30 s of lifetime and 300 s past it since Sign-on last answered: no more.
    clock.advanceSeconds(30 + 300 - 31 - STALE_RETRY_MS / 1000);
    await expect(checker.verify(token)).rejects.toThrow(SignonUnavailableError);
    expect(checker.staleAnswers).toBe(3);
  });
});

describe("stale-if-error", () => {
  it("takes Sign-on's next answer over the remembered user: a refusal after the outage is never overridden", async () => {
    const checker = verifier(300);
    const { user, token, answered } = await resolvedUser(checker);
    signon.userInfoOutage = "unavailable";
    clock.advanceSeconds(31);
    expect(await checker.verify(token)).toEqual(answered);

    signon.userInfoOutage = null;
    signon.revokeTokensOf(user.uid);
    clock.advanceSeconds(STALE_RETRY_MS / 1000);
    expect(await checker.verify(token)).toBeNull();
    // Sign-on away again, the refusal's lifetime over: a refusal is not given stale, and the user it replaced is gone.
    signon.userInfoOutage = "unavailable";
    clock.advanceSeconds(31);
    await expect(checker.verify(token)).rejects.toThrow(SignonUnavailableError);
  });

  it("gives nothing of a user forgotten since (a push said they changed)", async () => {
    const checker = verifier(300);
    const { user, token } = await resolvedUser(checker);
    signon.userInfoOutage = "unavailable";
    expect(checker.forgetUser(user.uid)).toBe(1);
    clock.advanceSeconds(1);
    await expect(checker.verify(token)).rejects.toThrow(SignonUnavailableError);
  });

  it("stands in for no answer but an outage: another refusal of the request (400) is not covered", async () => {
    const checker = createBearerTokenVerifier({
      signonUrl: signon.url,
      clientId: CLIENT.clientId,
      clock,
      bearerCacheTtlSeconds: 30,
      bearerStaleIfErrorSeconds: 300,
      // Sign-on's answer to the first request, then a 400 as from a proxy that refuses the request.
      fetch: async (input, init) => (signon.userInfoRequests === 0 ? globalThis.fetch(input, init) : new Response("bad request", { status: 400 })),
    });
    const user = signon.addUser(createUser());
    const token = signon.issueApiToken(user.uid);
    expect(await checker.verify(token)).not.toBeNull();
    clock.advanceSeconds(31);
    await expect(checker.verify(token)).rejects.toThrow(SignonUnavailableError);
  });

  it("is off by default: once the answer's lifetime is over, an outage is an error", async () => {
    const checker = verifier();
    const { token } = await resolvedUser(checker);
    signon.userInfoOutage = "dropped";
    clock.advanceSeconds(31);
    await expect(checker.verify(token)).rejects.toThrow(SignonUnavailableError);
    expect(checker.staleAnswers).toBe(0);
  });

  it("refuses a bound over an hour", () => {
    expect(() => verifier(3601)).toThrow(/bearerStaleIfErrorSeconds must be at most 3600, got 3601/);
    expect(() => verifier(-1)).toThrow(/bearerStaleIfErrorSeconds must be a number of at least 0/);
  });
});
