import pg from "pg";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { grantPermissions, revokePermissions } from "../../src/applications/permissions.js";
import { retireApplication } from "../../src/applications/retire-application.js";
import { suspendUser } from "../../src/accounts/manage-users.js";
import { followTokenAnswerChanges, LISTENER_APPLICATION_NAME } from "../../src/oauth/token-answer-changes.js";
import { TokenAnswerCache } from "../../src/oauth/token-answer-cache.js";
import { createApp, createUser } from "../support/factories.js";
import { liveAccessToken } from "../support/live-access-token.js";
import { basicAuth, exchangeCode, getUserJson, obtainCode, postForm } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();
const cache = signon.ctx.tokenAnswers as TokenAnswerCache;
const origin = { ip: "192.0.2.1", userAgent: "test" };

beforeEach(async () => {
  await vi.waitFor(() => expect(cache.following).toBe(true), { timeout: 10_000 });
});

async function signedInUser() {
  const client = await createApp(signon.ctx, { name: "Publisher", permissions: ["admin", "editor"] });
  const user = await createUser(signon.ctx, { name: "Grace Hopper", permissions: { Publisher: ["signin", "admin"] } });
  const { code } = await obtainCode(signon.app, client, user.email);
  const { access_token } = (await exchangeCode(signon.app, client, code)).json<{ access_token: string }>();
  return { client, user, accessToken: access_token };
}

/** Answers `/user.json` once, so that its answer is kept. */
async function answeredOnce(accessToken: string) {
  const response = await getUserJson(signon.app, accessToken);
  expect(response.statusCode).toBe(200);
  expect(cache.size).toBe(1);
  return response.json<{ user: { name: string; permissions: string[] } }>();
}

/** Runs SQL on a connection of its own, as another instance or an operator would. */
async function elsewhere(sql: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(sql, values);
  } finally {
    await client.end();
  }
}

describe("access-token answers kept in memory", () => {
  it("answers a token used again without reading the database", async () => {
    const { accessToken } = await signedInUser();
    await answeredOnce(accessToken);
    // Changed with the triggers off (as a replica applies changes): nothing tells this process, so the kept answer stays.
    await elsewhere(`begin; set local session_replication_role = replica; update signon.users set name = 'Changed Quietly'; commit`);
    expect((await getUserJson(signon.app, accessToken)).json()).toMatchObject({ user: { name: "Grace Hopper" } });
  });

  it("refuses a token at once after this process suspends its user", async () => {
    const { user, accessToken } = await signedInUser();
    await answeredOnce(accessToken);
    await suspendUser(signon.ctx, user.email, "Left the department");
    expect(cache.size).toBe(0);
    expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(401);
  });

  it("refuses a token at once after it is revoked (RFC 7009)", async () => {
    const { client, accessToken } = await signedInUser();
    await answeredOnce(accessToken);
    const revoked = await postForm(signon.app, "/oauth/revoke", { token: accessToken }, { authorization: basicAuth(client.clientId, client.clientSecret) });
    expect(revoked.statusCode).toBe(200);
    expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(401);
  });

  it("shows a permission granted or revoked at once, and refuses the token once signin is revoked", async () => {
    const { user, accessToken } = await signedInUser();
    await answeredOnce(accessToken);
    await grantPermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["editor"] });
    expect((await getUserJson(signon.app, accessToken)).json()).toMatchObject({ user: { permissions: ["admin", "editor", "signin"] } });
    // Kept once the grant's notification has come in (it arrives after the notice, and forgets a read it overlaps).
    await vi.waitFor(() => answeredOnce(accessToken));
    await revokePermissions(signon.ctx, { email: user.email, application: "Publisher", permissions: ["signin"] });
    expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(401);
  });

  it("refuses a token at once after its application is retired", async () => {
    const { client, user, accessToken } = await signedInUser();
    await answeredOnce(accessToken);
    await retireApplication(signon.ctx, client.application.id, { uid: user.uid, origin });
    expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(401);
  });

  it("follows a change made elsewhere (another instance, plain SQL) as soon as its notification arrives", async () => {
    const { user, accessToken } = await signedInUser();
    await answeredOnce(accessToken);
    await elsewhere(`update signon.users set name = 'Grace Brewster Hopper' where uid = $1`, [user.uid]);
    await vi.waitFor(async () => expect((await getUserJson(signon.app, accessToken)).json()).toMatchObject({ user: { name: "Grace Brewster Hopper" } }));
    await elsewhere(`update signon.access_tokens set revoked_at = now()`);
    await vi.waitFor(async () => expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(401));
  });

  it("keeps its answers through changes that alter none (a sign-in's timestamp, a token issued)", async () => {
    const { client, user, accessToken } = await signedInUser();
    await answeredOnce(accessToken);
    await elsewhere(`update signon.users set last_signed_in_at = now(), updated_at = now() where uid = $1`, [user.uid]);
    const { code } = await obtainCode(signon.app, client, user.email);
    expect((await exchangeCode(signon.app, client, code)).statusCode).toBe(200);
    // Sent after the changes above, so it arrives after any notification they caused.
    await elsewhere(`select pg_notify('unrelated', '')`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(cache.size).toBe(1);
  });

  it("keeps nothing while its notification connection is lost, and follows again once it is back", async () => {
    const { accessToken } = await signedInUser();
    await answeredOnce(accessToken);
    await elsewhere(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()`, [
      LISTENER_APPLICATION_NAME,
    ]);
    await vi.waitFor(() => expect(cache.following).toBe(false));
    expect(cache.size).toBe(0);
    expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(200);
    expect(cache.size).toBe(0);
    await vi.waitFor(() => expect(cache.following).toBe(true), { timeout: 10_000 });
    await answeredOnce(accessToken);
  });

  it("takes its listeners off the pool and its connections when it stops following", async () => {
    const listeners = async () => {
      const client = await database.pool.connect();
      client.release();
      return { notice: client.listenerCount("notice"), acquire: database.pool.listenerCount("acquire"), release: database.pool.listenerCount("release") };
    };
    const before = await listeners();
    const follower = followTokenAnswerChanges(database.pool, new TokenAnswerCache(10), { info: () => {}, warn: () => {} });
    expect((await listeners()).notice).toBe(before.notice + 1);
    await follower.close();
    expect(await listeners()).toEqual(before);
  });

  it("keeps nothing while a notification sent through the pool does not come back (a pooler that drops them, another server)", async () => {
    // The pool's statements reach another database of the server, where the listening connection hears nothing of them.
    const otherDatabase = new URL(database.url);
    otherDatabase.pathname = "/postgres";
    const elsewherePool = new pg.Pool({ connectionString: otherDatabase.toString(), max: 1 });
    const pool = {
      options: database.pool.options,
      on: () => pool,
      off: () => pool,
      query: (text: string, values: unknown[]) => elsewherePool.query(text, values),
    } as unknown as pg.Pool;
    const warnings: string[] = [];
    const followed = new TokenAnswerCache(10);
    const follower = followTokenAnswerChanges(pool, followed, { info: () => {}, warn: (line) => warnings.push(line) }, { checkIntervalMs: 50, checkTimeoutMs: 200 });
    try {
      await vi.waitFor(() => expect(warnings.join("\n")).toMatch(/a check notification did not arrive within 200 ms/));
      expect(followed.following).toBe(false);
    } finally {
      await follower.close();
      await elsewherePool.end();
    }
  });

  it("keeps nothing when client_min_messages holds back the notices of its own changes", async () => {
    const quietPool = new pg.Pool({ connectionString: database.url, max: 1, options: "-c client_min_messages=warning" });
    const warnings: string[] = [];
    const followed = new TokenAnswerCache(10);
    const follower = followTokenAnswerChanges(quietPool, followed, { info: () => {}, warn: (line) => warnings.push(line) });
    try {
      await vi.waitFor(() => expect(warnings.join("\n")).toMatch(/client_min_messages is warning/));
      expect(followed.following).toBe(false);
    } finally {
      await follower.close();
      await quietPool.end();
    }
  });

  it("follows again once the end-to-end check passes, checking on and on", async () => {
    const followed = new TokenAnswerCache(10);
    const follower = followTokenAnswerChanges(database.pool, followed, { info: () => {}, warn: () => {} }, { checkIntervalMs: 20, checkTimeoutMs: 2_000 });
    try {
      await vi.waitFor(() => expect(followed.following).toBe(true));
      // Several checks later it still follows, and nothing it kept was forgotten by a check.
      followed.keep("digest", liveAccessToken(), followed.generation);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(followed.following).toBe(true);
      expect(followed.size).toBe(1);
    } finally {
      await follower.close();
    }
  });
});
