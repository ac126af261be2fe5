import { afterAll, describe, expect, it } from "vitest";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { startSignon } from "../../src/server.js";
import { grantPermissions } from "../../src/applications/permissions.js";
import { statementRunner } from "../../src/db/statements.js";
import { listPushes } from "../../src/repositories/push-deliveries.js";
import { findUserByUid } from "../../src/repositories/users.js";
import { pushDeliveries, users } from "../../src/db/schema.js";
import { eq } from "drizzle-orm";
import { createApp, createUser } from "../support/factories.js";
import { FakeReceivers } from "../support/fake-receivers.js";
import { openTestDatabase, testConfig } from "../support/signon.js";

const database = await openTestDatabase();
afterAll(() => database.close());

describe("startSignon", () => {
  it("migrates, listens on loopback, serves, and closes", async () => {
    const running = await startSignon({ DATABASE_URL: database.url, SIGNON_PORT: "0", SIGNON_ARGON2_MEMORY_KIB: "64", SIGNON_ARGON2_TIME_COST: "1" }, { logger: false });
    try {
      expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const response = await fetch(`${running.url}/.well-known/oauth-authorization-server`);
      expect(response.status).toBe(200);
    } finally {
      await running.close();
    }
    await expect(fetch(`${running.url}/`)).rejects.toThrow();
  });

  it("runs prepared statements on a PostgreSQL server behind DATABASE_URL (outside or the tests' embedded one)", async () => {
    const running = await startSignon({ DATABASE_URL: database.url, SIGNON_PORT: "0" }, { logger: false });
    try {
      expect(running.config.preparedStatements).toBe(true);
    } finally {
      await running.close();
    }
  });

  it("refuses to start on a non-loopback host in development", async () => {
    await expect(startSignon({ DATABASE_URL: database.url, SIGNON_HOST: "0.0.0.0" })).rejects.toThrow(/SIGNON_HOST/);
  });

  it("delivers pushes from its own process with the fetch it is given, unless SIGNON_PUSH_DELIVERY=false", async () => {
    const ctx = { db: database.db, statements: statementRunner(database.pool, false), config: testConfig(), now: () => new Date() };
    await createApp(ctx, { name: "Pushed", redirectUris: ["https://pushed.example/cb"] });
    const user = await createUser(ctx);
    const receivers = new FakeReceivers();
    const env = { DATABASE_URL: database.url, SIGNON_PORT: "0", SIGNON_PUSH_POLL_MS: "20" };

    const quiet = await startSignon({ ...env, SIGNON_PUSH_DELIVERY: "false" }, { logger: false, fetch: receivers.fetch });
    await grantPermissions(ctx, { email: user.email, application: "Pushed", permissions: ["signin"] });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await quiet.close();
    const running = await startSignon(env, { logger: false, fetch: receivers.fetch });
    try {
      for (let waited = 0; receivers.received.length === 0 && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await running.close();
    }

    expect(quiet.pushes).toBeNull();
    expect(receivers.received.map((push) => `${push.method} ${push.url}`)).toEqual([`PUT https://pushed.example/users/${user.uid}`]);
    expect(await listPushes(database.db, {})).toEqual([expect.objectContaining({ status: "delivered", attempts: 1 })]);
  });

  it("runs the inactivity job in its own process: a person idle too long is suspended and the suspension pushed", async () => {
    const ctx = { db: database.db, statements: statementRunner(database.pool, false), config: testConfig(), now: () => new Date() };
    await createApp(ctx, { name: "Idle app", redirectUris: ["https://idle.example/cb"] });
    const idle = await createUser(ctx, { permissions: { "Idle app": ["signin"] } });
    // The application issued them a token once, so it hears of the suspension (row 23).
    await issueOperatorToken(ctx, { email: idle.email, application: "Idle app" });
    const active = await createUser(ctx);
    await database.db.update(users).set({ createdAt: new Date(Date.now() - 50 * 86_400_000) }).where(eq(users.uid, idle.uid));
    // Only the suspension's pushes are of interest here, not the grant's.
    await database.db.delete(pushDeliveries);
    const receivers = new FakeReceivers();

    const running = await startSignon(
      { DATABASE_URL: database.url, SIGNON_PORT: "0", SIGNON_PUSH_POLL_MS: "20" },
      { logger: false, fetch: receivers.fetch, inactivityFirstRunMs: 10 },
    );
    try {
      for (let waited = 0; (await findUserByUid(database.db, idle.uid))?.suspendedAt == null && waited < 10_000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      for (let waited = 0; receivers.received.length < 2 && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await running.close();
    }

    expect((await findUserByUid(database.db, idle.uid))?.suspensionReason).toBe("Not signed in for 45 days");
    expect((await findUserByUid(database.db, active.uid))?.suspendedAt).toBeNull();
    expect(receivers.received.map((push) => `${push.method} ${push.url}`)).toEqual([
      `PUT https://idle.example/users/${idle.uid}`,
      `POST https://idle.example/users/${idle.uid}/reauth`,
    ]);
  });
});
