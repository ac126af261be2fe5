import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startSession, endSession } from "../../src/accounts/sessions.js";
import { suspendUser, unsuspendUser, updateUserDetails } from "../../src/accounts/manage-users.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { grantPermissions, revokePermissions } from "../../src/applications/permissions.js";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { PushDeliveryService, type PushAttemptFields } from "../../src/pushes/delivery-service.js";
import { listPushes, retryPush } from "../../src/repositories/push-deliveries.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { InjectBrowser } from "../support/browser.js";
import { FakeReceivers } from "../support/fake-receivers.js";
import { exchangeCode, getUserJson, obtainCode } from "../support/flow.js";
import { buildTestSignon, openTestDatabase, testConfig, type TestSignon } from "../support/signon.js";

const database = await openTestDatabase();
let signon: TestSignon;
beforeAll(async () => {
  signon = await buildTestSignon(database);
});
afterAll(async () => {
  await signon.app.close();
  await database.close();
});

let receivers: FakeReceivers;
let worker: PushDeliveryService;
beforeEach(async () => {
  await database.reset();
  receivers = new FakeReceivers();
  // Jitter fixed at its middle so retry times are known.
  worker = new PushDeliveryService(signon.ctx, { fetch: receivers.fetch, random: () => 0.5 });
});

/** Runs delivery rounds until nothing is due at the current (fake) time. */
async function deliverDue(): Promise<void> {
  while ((await worker.runOnce()) > 0);
}

const pushes = () => listPushes(signon.ctx.db, {});

async function publisherAndUser() {
  const { application } = await createApp(signon.ctx, { name: "Publisher", redirectUris: ["https://publisher.example/auth/gds/callback"] });
  const user = await createUser(signon.ctx, { name: "Grace Hopper", email: "grace@example.org" });
  return { application, user };
}

function userJson(uid: string, permissions: string[], extra: Partial<Record<string, unknown>> = {}) {
  return {
    user: {
      uid,
      name: "Grace Hopper",
      email: "grace@example.org",
      permissions,
      organisation_slug: null,
      organisation_content_id: null,
      disabled: false,
      ...extra,
    },
  };
}

describe("PUT {push_base}/users/{uid}", () => {
  it("sends the user's /user.json body for the application when a permission is granted, to the origin of its first redirect URI", async () => {
    const { user } = await publisherAndUser();

    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin", "admin"] });
    await deliverDue();

    expect(receivers.summary()).toEqual([
      { method: "PUT", url: `https://publisher.example/users/${user.uid}`, body: userJson(user.uid, ["admin", "signin"]) },
    ]);
    expect((await pushes()).map(({ status, attempts, kind }) => ({ status, attempts, kind }))).toEqual([{ status: "delivered", attempts: 1, kind: "update" }]);
  });

  it("uses the push base the application registered", async () => {
    await createApp(signon.ctx, { name: "Editorial", redirectUris: ["https://ed.example/auth/gds/callback"], pushBaseUrl: "https://ed.example/auth/gds/api" });
    const user = await createUser(signon.ctx, { permissions: { Editorial: ["signin"] } });
    await deliverDue();

    expect(receivers.received.map((push) => push.url)).toEqual([`https://ed.example/auth/gds/api/users/${user.uid}`]);
  });

  it("carries a token of the push API user, which holds signin and user_update_permission on the application", async () => {
    const { user } = await publisherAndUser();
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await deliverDue();

    const token = /^Bearer ([0-9a-f]{64})$/.exec(receivers.received[0]?.authorization ?? "")?.[1] ?? "";
    const answer = await getUserJson(signon.app, token);

    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({
      user: expect.objectContaining({ email: "push@signon.invalid", permissions: ["signin", "user_update_permission"], disabled: false }) as unknown,
    });
  });

  it("sends the new permissions to that application only when one is revoked", async () => {
    const { user } = await publisherAndUser();
    await createApp(signon.ctx, { name: "Other" });
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin", "admin"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Other", permissions: ["signin"] });
    await deliverDue();
    receivers.received.length = 0;

    await revokePermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["admin"] });
    await deliverDue();

    expect(receivers.summary()).toEqual([
      { method: "PUT", url: `https://publisher.example/users/${user.uid}`, body: userJson(user.uid, ["signin"]) },
    ]);
  });

  it("tells each application that issued the user a token about a new name, e-mail address or organisation, and not one where they only hold signin", async () => {
    const { user } = await publisherAndUser();
    await createApp(signon.ctx, { name: "Other", redirectUris: ["https://other.example/cb"] });
    await createApp(signon.ctx, { name: "Unused", redirectUris: ["https://unused.example/cb"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Other", permissions: ["signin"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Unused", permissions: ["signin"] });
    await issueOperatorToken(signon.ctx, { email: user.email, application: "Publisher" });
    await issueOperatorToken(signon.ctx, { email: user.email, application: "Other" });
    await deliverDue();
    receivers.received.length = 0;
    const organisation = await createOrganisation(signon.ctx, { slug: "cabinet-office", name: "Cabinet Office" });

    await updateUserDetails(signon.ctx, user.email, { name: "Grace B. Hopper", email: "gbh@example.org", organisationId: organisation.id });
    await deliverDue();

    const body = userJson(user.uid, ["signin"], {
      name: "Grace B. Hopper",
      email: "gbh@example.org",
      organisation_slug: "cabinet-office",
      organisation_content_id: organisation.contentId,
    });
    // A new e-mail address also ends every sign-in (S18): a reauth follows each PUT.
    expect(receivers.summary().sort((a, b) => a.url.localeCompare(b.url))).toEqual([
      { method: "PUT", url: `https://other.example/users/${user.uid}`, body },
      { method: "POST", url: `https://other.example/users/${user.uid}/reauth`, body: {} },
      { method: "PUT", url: `https://publisher.example/users/${user.uid}`, body },
      { method: "POST", url: `https://publisher.example/users/${user.uid}/reauth`, body: {} },
    ]);
  });

  it("reaches an application where the user holds no permission but was issued a token", async () => {
    const { user } = await publisherAndUser();
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await issueOperatorToken(signon.ctx, { email: user.email, application: "Publisher" });
    await revokePermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await deliverDue();
    receivers.received.length = 0;

    await updateUserDetails(signon.ctx, user.email, { name: "Grace B. Hopper" });
    await deliverDue();

    expect(receivers.summary()).toEqual([
      { method: "PUT", url: `https://publisher.example/users/${user.uid}`, body: userJson(user.uid, [], { name: "Grace B. Hopper" }) },
    ]);
  });
  it("counts an application that issued tokens for an exchanged code, and not one whose code was never exchanged", async () => {
    const user = await createUser(signon.ctx, { name: "Grace Hopper", email: "grace@example.org" });
    const exchanged = await createApp(signon.ctx, { name: "Exchanged", redirectUris: ["https://exchanged.example/auth/gds/callback"] });
    const abandoned = await createApp(signon.ctx, { name: "Abandoned", redirectUris: ["https://abandoned.example/auth/gds/callback"] });
    for (const application of ["Exchanged", "Abandoned"]) await grantPermissions(signon.ctx, { email: user.email, application, permissions: ["signin"] });
    const { code } = await obtainCode(signon.app, exchanged, user.email);
    expect((await exchangeCode(signon.app, exchanged, code)).statusCode).toBe(200);
    await obtainCode(signon.app, abandoned, user.email);
    await deliverDue();
    receivers.received.length = 0;

    await updateUserDetails(signon.ctx, user.email, { name: "Grace B. Hopper" });
    await deliverDue();

    expect(receivers.summary()).toEqual([
      { method: "PUT", url: `https://exchanged.example/users/${user.uid}`, body: userJson(user.uid, ["signin"], { name: "Grace B. Hopper" }) },
    ]);
  });
});

describe("POST {push_base}/users/{uid}/reauth", () => {
  it("follows the PUT when signin is revoked", async () => {
    const { user } = await publisherAndUser();
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin", "admin"] });
    await deliverDue();
    receivers.received.length = 0;

    await revokePermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await deliverDue();

    expect(receivers.summary()).toEqual([
      { method: "PUT", url: `https://publisher.example/users/${user.uid}`, body: userJson(user.uid, ["admin"]) },
      { method: "POST", url: `https://publisher.example/users/${user.uid}/reauth`, body: {} },
    ]);
  });

  it("follows a PUT with disabled: true and no permissions on suspension, for each application that issued the user a token, and a PUT follows unsuspension", async () => {
    const { user } = await publisherAndUser();
    await createApp(signon.ctx, { name: "Unused", redirectUris: ["https://unused.example/cb"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Unused", permissions: ["signin"] });
    await issueOperatorToken(signon.ctx, { email: user.email, application: "Publisher" });
    await deliverDue();
    receivers.received.length = 0;

    await suspendUser(signon.ctx, user.email, "Left the organisation");
    await deliverDue();
    const suspension = receivers.summary();
    receivers.received.length = 0;
    await unsuspendUser(signon.ctx, user.email);
    await deliverDue();

    expect(suspension).toEqual([
      { method: "PUT", url: `https://publisher.example/users/${user.uid}`, body: userJson(user.uid, [], { disabled: true }) },
      { method: "POST", url: `https://publisher.example/users/${user.uid}/reauth`, body: {} },
    ]);
    expect(receivers.summary()).toEqual([
      { method: "PUT", url: `https://publisher.example/users/${user.uid}`, body: userJson(user.uid, ["signin"]) },
    ]);
  });

  it("goes to every application the user used when they sign out of Sign-on", async () => {
    const { user } = await publisherAndUser();
    await createApp(signon.ctx, { name: "Other", redirectUris: ["https://other.example/cb"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Other", permissions: ["signin"] });
    await issueOperatorToken(signon.ctx, { email: user.email, application: "Publisher" });
    await deliverDue();
    receivers.received.length = 0;
    const session = await startSession(signon.ctx, user, undefined, { ip: null, userAgent: null });

    await endSession(signon.ctx, session, { ip: null, userAgent: null });
    await deliverDue();

    expect(receivers.summary()).toEqual([{ method: "POST", url: `https://publisher.example/users/${user.uid}/reauth`, body: {} }]);
  });
});

describe("POST /sign-out", () => {
  it("queues a reauth to each application the user signed in to through Sign-on", async () => {
    const { user } = await publisherAndUser();
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await issueOperatorToken(signon.ctx, { email: user.email, application: "Publisher" });
    await deliverDue();
    receivers.received.length = 0;
    const browser = new InjectBrowser(signon.app);
    await browser.signIn("/sign-in", user.email, defaultPassword);
    const home = await browser.get("/");
    const csrfToken = /name="_csrf" value="([^"]*)"/.exec(home.body)?.[1] ?? "";

    const signedOut = await browser.postForm("/sign-out", { _csrf: csrfToken });
    await deliverDue();

    expect(signedOut.statusCode).toBe(303);
    expect(receivers.summary()).toEqual([{ method: "POST", url: `https://publisher.example/users/${user.uid}/reauth`, body: {} }]);
  });
});

describe("delivery", () => {
  it("retries with exponential backoff while the receiver is down and delivers when it is back", async () => {
    const { user } = await publisherAndUser();
    receivers.down = true;
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });

    await deliverDue();
    const afterFirst = await pushes();
    signon.clock.advance(3);
    const earlyRound = await worker.runOnce();
    signon.clock.advance(1);
    await deliverDue();
    const afterSecond = await pushes();
    signon.clock.advance(7.5);
    await deliverDue();
    receivers.down = false;
    signon.clock.advance(15);
    await deliverDue();

    expect(afterFirst).toEqual([
      expect.objectContaining({
        status: "pending",
        attempts: 1,
        next_attempt_at: new Date(signon.clock.now().getTime() - 26_500 + 3_750).toISOString(),
        last_error: "fetch failed: ECONNREFUSED",
      }),
    ]);
    expect(earlyRound).toBe(0);
    // Second wait: between 5 and 10 s (7.5 with the jitter fixed at its middle).
    expect(afterSecond[0]).toMatchObject({ status: "pending", attempts: 2 });
    expect(await pushes()).toEqual([expect.objectContaining({ status: "delivered", attempts: 4, last_error: null, next_attempt_at: null })]);
    expect(receivers.summary()).toEqual([{ method: "PUT", url: `https://publisher.example/users/${user.uid}`, body: userJson(user.uid, ["signin"]) }]);
  });

  it("keeps retrying for 24 hours, then records the push as failed", async () => {
    const { user } = await publisherAndUser();
    receivers.down = true;
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    const queuedAt = signon.clock.now().getTime();

    let failedAt: number | undefined;
    while (failedAt === undefined) {
      await deliverDue();
      const [push] = await pushes();
      if (push?.status === "failed") failedAt = signon.clock.now().getTime();
      signon.clock.advance(600);
    }

    const [push] = await pushes();
    expect(failedAt - queuedAt).toBeGreaterThanOrEqual(24 * 3600 * 1000);
    expect(failedAt - queuedAt).toBeLessThan(26 * 3600 * 1000);
    expect(push).toMatchObject({ status: "failed", last_error: expect.stringMatching(/^gave up after \d+ attempts: fetch failed/) as unknown });
  });

  it("records a 4xx as a permanent failure, and an administrator can retry it", async () => {
    const { user } = await publisherAndUser();
    receivers.status = 403;
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });

    await deliverDue();
    signon.clock.advance(48 * 3600);
    await deliverDue();
    const failed = await pushes();
    receivers.status = 200;
    await retryPush(signon.ctx.db, failed[0]?.id ?? 0, signon.clock.now());
    await deliverDue();

    expect(failed).toEqual([expect.objectContaining({ status: "failed", attempts: 1, last_error: 'HTTP 403 {"error":"refused"}' })]);
    expect(await pushes()).toEqual([expect.objectContaining({ status: "delivered", attempts: 1 })]);
    expect(receivers.received).toHaveLength(2);
  });

  it.each([408, 429, 500, 503])("retries after a %i", async (status) => {
    const { user } = await publisherAndUser();
    receivers.status = status;
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });

    await deliverDue();

    expect(await pushes()).toEqual([expect.objectContaining({ status: "pending", attempts: 1, last_error: expect.stringMatching(new RegExp(`^HTTP ${status}`)) as unknown })]);
  });

  it("counts a receiver that does not answer in time as a failed attempt", async () => {
    const { user } = await publisherAndUser();
    receivers.onRequest = (push) => new Promise((resolve) => setTimeout(resolve, push.method === "PUT" ? 5_000 : 0));
    const slowFetch: typeof fetch = (input, init) =>
      new Promise((resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason as Error));
        void receivers.fetch(input, init).then(resolve);
      });
    worker = new PushDeliveryService(signon.ctx, { fetch: slowFetch, requestTimeoutMs: 50, random: () => 0.5 });
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });

    await deliverDue();

    expect(await pushes()).toEqual([expect.objectContaining({ status: "pending", attempts: 1, last_error: "no answer within 50 ms" })]);
  });

  it("coalesces changes made before delivery into one PUT of the latest state, in order with the reauth between them", async () => {
    const { user } = await publisherAndUser();
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["admin"] });
    await revokePermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });

    await deliverDue();

    // Losing signin (update + reauth) came before the last grant (update): the reauth goes first, then the latest state.
    expect(receivers.summary()).toEqual([
      { method: "POST", url: `https://publisher.example/users/${user.uid}/reauth`, body: {} },
      { method: "PUT", url: `https://publisher.example/users/${user.uid}`, body: userJson(user.uid, ["admin", "signin"]) },
    ]);
  });

  it("sends the newer state again when a change lands while the older one is being sent", async () => {
    const { user } = await publisherAndUser();
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    let changed = false;
    receivers.onRequest = async () => {
      if (changed) return;
      changed = true;
      await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["admin"] });
    };

    await deliverDue();

    expect(receivers.summary().map((push) => push.body)).toEqual([userJson(user.uid, ["signin"]), userJson(user.uid, ["admin", "signin"])]);
    expect(await pushes()).toEqual([expect.objectContaining({ status: "delivered" })]);
  });

  it("never lets two workers send the same push at once", async () => {
    const { user } = await publisherAndUser();
    const other = new PushDeliveryService(signon.ctx, { fetch: receivers.fetch });
    await createApp(signon.ctx, { name: "Other", redirectUris: ["https://other.example/cb"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await grantPermissions(signon.ctx, { email: user.email, application: "Other", permissions: ["signin"] });
    await issueOperatorToken(signon.ctx, { email: user.email, application: "Publisher" });
    await issueOperatorToken(signon.ctx, { email: user.email, application: "Other" });
    await suspendUser(signon.ctx, user.email, "test");

    const sent: number[] = await Promise.all([worker.runOnce(), other.runOnce(), worker.runOnce(), other.runOnce()]);
    for (let round = sent; round.some((count) => count > 0); ) {
      round = await Promise.all([worker.runOnce(), other.runOnce()]);
      sent.push(...round);
    }

    // Four pushes in all, each sent by exactly one worker: the counts add up to four and nothing arrived twice.
    expect(sent.reduce((a, b) => a + b, 0)).toBe(4);
    expect(receivers.received.map((push) => `${push.method} ${new URL(push.url).host}`).sort()).toEqual([
      "POST other.example",
      "POST publisher.example",
      "PUT other.example",
      "PUT publisher.example",
    ]);
    const order = receivers.received.filter((push) => push.url.includes("publisher")).map((push) => push.method);
    expect(order).toEqual(["PUT", "POST"]);
  });

  it("finds a due push behind a window full of pushes waiting for others of their (user, application)", async () => {
    await createApp(signon.ctx, { name: "Busy", redirectUris: ["https://busy.example/cb"] });
    await createApp(signon.ctx, { name: "Free", redirectUris: ["https://free.example/cb"] });
    for (let n = 0; n < 5; n++) await createUser(signon.ctx, { permissions: { Busy: ["signin"] } });
    const free = await createUser(signon.ctx, { permissions: { Free: ["signin"] } });
    await database.pool.query("update signon.push_deliveries set status = 'delivered'");
    for (const push of await pushes()) {
      if (push.application === "Busy") await suspendUser(signon.ctx, push.email, "test");
    }
    await grantPermissions(signon.ctx, { email: free.email, application: "Free", permissions: ["admin"] });
    // Every PUT to Busy is being sent by another worker: each reauth must wait for its PUT.
    await database.pool.query(
      "update signon.push_deliveries d set lease_token = gen_random_uuid(), lease_until = now() + interval '1 day' from signon.applications a where a.id = d.application_id and a.name = 'Busy' and d.kind = 'update'",
    );
    const narrow = new PushDeliveryService(signon.ctx, { fetch: receivers.fetch, concurrency: 1 });

    expect(await narrow.runOnce()).toBe(1);

    expect(receivers.received.map((push) => push.url)).toEqual([`https://free.example/users/${free.uid}`]);
  });
});

describe("logs", () => {
  /** A worker whose log lines are kept. */
  function loggingWorker(options: { requestTimeoutMs?: number; fetch?: typeof fetch } = {}) {
    const lines: { level: "warn" | "error"; message: string; fields: PushAttemptFields | undefined }[] = [];
    const log = {
      warn: (message: string, fields?: PushAttemptFields) => lines.push({ level: "warn", message, fields }),
      error: (message: string, fields?: PushAttemptFields) => lines.push({ level: "error", message, fields }),
    };
    return { lines, worker: new PushDeliveryService(signon.ctx, { fetch: receivers.fetch, random: () => 0.5, log, ...options }) };
  }

  it("logs each failed attempt with the application, user, status and attempt, and never the token", async () => {
    const { user } = await publisherAndUser();
    const { lines, worker: logging } = loggingWorker();
    receivers.status = 503;
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });

    await logging.runOnce();
    signon.clock.advance(10);
    receivers.down = true;
    await logging.runOnce();
    signon.clock.advance(10);
    receivers.down = false;
    receivers.status = 200;
    await logging.runOnce();

    expect(lines).toEqual([
      {
        level: "warn",
        message: `push PUT to Publisher for user ${user.uid}, attempt 1 failed: HTTP 503; retrying in 4 s`,
        fields: { application: "Publisher", uid: user.uid, kind: "update", status: 503, attempt: 1, outcome: "retry", next_attempt_at: expect.any(String) as unknown },
      },
      {
        level: "warn",
        message: `push PUT to Publisher for user ${user.uid}, attempt 2 failed: fetch failed: ECONNREFUSED; retrying in 8 s`,
        fields: {
          application: "Publisher",
          uid: user.uid,
          kind: "update",
          status: null,
          attempt: 2,
          outcome: "retry",
          next_attempt_at: expect.any(String) as unknown,
          error: "fetch failed: ECONNREFUSED",
        },
      },
    ]);
    const token = receivers.received[0]?.authorization?.replace(/^Bearer /, "");
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it("logs a push given up as an error, without the receiver's answer", async () => {
    const { user } = await publisherAndUser();
    const { lines, worker: logging } = loggingWorker();
    receivers.status = 404;
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });

    await logging.runOnce();

    expect(lines).toEqual([
      {
        level: "error",
        message: `push PUT to Publisher for user ${user.uid}, attempt 1 failed for good: HTTP 404`,
        fields: { application: "Publisher", uid: user.uid, kind: "update", status: 404, attempt: 1, outcome: "failed" },
      },
    ]);
  });

  it("logs nothing when every push is delivered", async () => {
    const { user } = await publisherAndUser();
    const { lines, worker: logging } = loggingWorker();
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    await suspendUser(signon.ctx, user.email, "test");

    while ((await logging.runOnce()) > 0);

    expect(receivers.received.length).toBeGreaterThan(0);
    expect(lines).toEqual([]);
  });
});

describe("SIGNON_PUSH_FAN_OUT=token-or-permission", () => {
  it("also tells each application where the person holds a permission but never signed in of a suspension", async () => {
    const wide = await buildTestSignon(database, testConfig({ SIGNON_PUSH_FAN_OUT: "token-or-permission" }));
    try {
      const { user } = await publisherAndUser();
      await grantPermissions(wide.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
      const wideWorker = new PushDeliveryService(wide.ctx, { fetch: receivers.fetch, random: () => 0.5 });
      while ((await wideWorker.runOnce()) > 0);
      receivers.received.length = 0;

      await suspendUser(wide.ctx, user.email, "Left the organisation");
      while ((await wideWorker.runOnce()) > 0);

      expect(receivers.summary()).toEqual([
        { method: "PUT", url: `https://publisher.example/users/${user.uid}`, body: userJson(user.uid, [], { disabled: true }) },
        { method: "POST", url: `https://publisher.example/users/${user.uid}/reauth`, body: {} },
      ]);
    } finally {
      await wide.app.close();
    }
  });

  it("is refused at start-up when it is neither token nor token-or-permission", () => {
    expect(() => testConfig({ SIGNON_PUSH_FAN_OUT: "everyone" })).toThrow('SIGNON_PUSH_FAN_OUT: must be token or token-or-permission, not "everyone"');
  });
});
