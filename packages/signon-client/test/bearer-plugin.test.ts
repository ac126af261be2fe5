import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { signonBearerPlugin } from "../src/fastify/index.js";
import { ManualClock, StandInSignon } from "../src/testing/index.js";
import { CLIENT, createUser } from "./support/client-app.js";

let clock: ManualClock;
let signon: StandInSignon;
let api: FastifyInstance;

beforeEach(async () => {
  clock = new ManualClock();
  signon = new StandInSignon({ client: CLIENT, clock });
  await signon.listen();
  api = Fastify();
  await api.register(signonBearerPlugin, { signonUrl: signon.url, clientId: CLIENT.clientId, clock });
  api.get("/reports", { onRequest: api.signonBearer.requireBearerToken(["staff"]) }, (request) => ({
    uid: request.signonApiUser?.uid,
  }));
});

afterEach(async () => {
  await api.close();
  await signon.close();
});

function getReports(token: string | null) {
  return api.inject({ method: "GET", url: "/reports", headers: token ? { authorization: `Bearer ${token}` } : {} });
}

describe("signonBearerPlugin (an API-only service)", () => {
  it("lets in a token whose user holds the permission", async () => {
    const staff = signon.addUser(createUser({ permissions: ["staff"] }));

    const response = await getReports(signon.issueApiToken(staff.uid));

    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ uid: staff.uid });
  });

  it("answers 401 without a token, 401 for a rejected one and 403 without the permission", async () => {
    const learner = signon.addUser(createUser());

    const [missing, rejected, forbidden] = [
      await getReports(null),
      await getReports("rejected"),
      await getReports(signon.issueApiToken(learner.uid)),
    ];

    expect([missing.statusCode, rejected.statusCode, forbidden.statusCode]).toEqual([401, 401, 403]);
    expect(forbidden.json()).toEqual({
      error: "insufficient_scope",
      error_description: "The bearer token's user lacks: staff.",
    });
  });

  it("refuses a token issued to another application, whatever its user holds there", async () => {
    const staff = signon.addUser(createUser({ permissions: ["staff"] }));

    const response = await getReports(signon.issueApiToken(staff.uid, "another-application"));

    expect(response.statusCode).toBe(401);
  });

  it("names this application in every check (client_id)", async () => {
    const staff = signon.addUser(createUser({ permissions: ["staff"] }));
    const asked: string[] = [];
    const recording = Fastify();
    await recording.register(signonBearerPlugin, {
      signonUrl: signon.url,
      clientId: CLIENT.clientId,
      clock,
      fetch: (url, init) => {
        asked.push(url.replace(signon.url, ""));
        return fetch(url, init);
      },
    });
    recording.get("/reports", { onRequest: recording.signonBearer.requireBearerToken(["staff"]) }, () => "ok");

    const response = await recording.inject({ url: "/reports", headers: { authorization: `Bearer ${signon.issueApiToken(staff.uid)}` } });

    expect(response.statusCode).toBe(200);
    expect(asked).toEqual([`/user.json?client_id=${CLIENT.clientId}`]);
    await recording.close();
  });

  it("asks Sign-on once per token within 60 seconds", async () => {
    const staff = signon.addUser(createUser({ permissions: ["staff"] }));
    const token = signon.issueApiToken(staff.uid);

    await getReports(token);
    clock.advanceSeconds(30);
    await getReports(token);
    expect(signon.userInfoRequests).toBe(1);
    clock.advanceSeconds(30);
    await getReports(token);
    expect(signon.userInfoRequests).toBe(2);
  });
});
