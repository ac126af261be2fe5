import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { suspendUser, updateUserDetails } from "../../src/accounts/manage-users.js";
import { grantPermissions, revokePermissions } from "../../src/applications/permissions.js";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { listPushes, readUserJsonBodies } from "../../src/repositories/push-deliveries.js";
import { createApp, createUser } from "../support/factories.js";
import { HttpReceiver } from "../support/http-receiver.js";
import { freePort } from "../support/listening.js";
import { buildTestSignon, openTestDatabase } from "../support/signon.js";

// The delivering service runs as its own process (the real server entry point),
// is killed with SIGKILL while pushes are pending and the receiver is down,
// and started again; nothing queued may be lost or arrive stale.
const database = await openTestDatabase();
const signon = await buildTestSignon(database);
// The server process keeps real time, so the changes here do too.
const ctx = { ...signon.ctx, now: () => new Date() };
const children = new Set<ChildProcess>();
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await signon.app.close();
  await database.close();
});

const serverEntry = fileURLToPath(new URL("../../src/server.ts", import.meta.url));

async function startServerProcess(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", serverEntry], {
    env: {
      ...process.env,
      NODE_ENV: "development",
      DATABASE_URL: database.url,
      SIGNON_PORT: String(port),
      SIGNON_PUSH_POLL_MS: "20",
      SIGNON_PUSH_TIMEOUT_SECONDS: "1",
      SIGNON_PUSH_RETRY_BASE_MS: "50",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  // Starting compiles the server with tsx: on a busy machine, with other test files running, that can take a while.
  await until(async () => (await fetch(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`).catch(() => null))?.ok === true, 90_000);
  return child;
}

async function until(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

describe("push delivery across a crash", () => {
  it("delivers every final state after SIGKILL and restart, in order, none stale after a newer one", async () => {
    const receiver = new HttpReceiver(await freePort());
    await createApp(ctx, { name: "A", redirectUris: [`${receiver.url}/a/auth/gds/callback`], pushBaseUrl: `${receiver.url}/a` });
    await createApp(ctx, { name: "B", redirectUris: [`${receiver.url}/b/auth/gds/callback`], pushBaseUrl: `${receiver.url}/b` });
    const users = [];
    for (let n = 0; n < 4; n++) users.push(await createUser(ctx, { permissions: { A: ["signin"], B: ["signin"] } }));
    // Both applications have signed everyone in, so every change of theirs reaches both (row 23).
    for (const user of users) for (const application of ["A", "B"]) await issueOperatorToken(ctx, { email: user.email, application });

    const first = await startServerProcess(await freePort());
    // Changes while the receiver is down: the worker keeps failing and retrying.
    for (const user of users) {
      await grantPermissions(ctx, { email: user.email, application: "A", permissions: ["admin"] });
      await updateUserDetails(ctx, user.email, { name: `${user.name} (renamed)` });
    }
    await until(async () => (await listPushes(ctx.db, { status: "pending" })).every((push) => push.attempts >= 2));
    await kill(first);

    // More changes while no worker runs.
    const [u0, u1, u2] = users as [(typeof users)[0], (typeof users)[0], (typeof users)[0]];
    await revokePermissions(ctx, { email: u0.email, application: "A", permissions: ["admin"] });
    await revokePermissions(ctx, { email: u1.email, application: "B", permissions: ["signin"] });
    await suspendUser(ctx, u2.email, "Left");
    await updateUserDetails(ctx, u0.email, { name: "Final name" });

    await startServerProcess(await freePort());
    await receiver.up();
    await until(async () => (await listPushes(ctx.db, { status: "pending" })).length === 0);
    await receiver.down();

    const pairs = users.flatMap((user) => ["A", "B"].map((app) => ({ user, app })));
    const applicationIds = new Map((await database.pool.query<{ id: string; name: string }>("select id, name from signon.applications")).rows.map((row) => [row.name, row.id]));
    const finals = await readUserJsonBodies(ctx.db, pairs.map(({ user, app }) => ({ userUid: user.uid, applicationId: applicationIds.get(app) ?? "" })));
    expect(await listPushes(ctx.db, { status: "failed" })).toEqual([]);
    for (const { user, app } of pairs) {
      const puts = receiver.received.filter((request) => request.method === "PUT" && request.path === `/${app.toLowerCase()}/users/${user.uid}`);
      const final = finals.get(`${user.uid} ${applicationIds.get(app) ?? ""}`);
      // The final state arrived, and nothing else arrived after it.
      expect(puts.at(-1)?.body).toEqual(final);
      const firstFinal = puts.findIndex((request) => JSON.stringify(request.body) === JSON.stringify(final));
      expect(puts.slice(firstFinal).every((request) => JSON.stringify(request.body) === JSON.stringify(final))).toBe(true);
    }
    const order = (uid: string, app: string) =>
      receiver.received.filter((request) => request.path.startsWith(`/${app.toLowerCase()}/users/${uid}`)).map((request) => request.method);
    expect(order(u1.uid, "B").at(-1)).toBe("POST");
    expect(order(u2.uid, "A").slice(-2)).toEqual(["PUT", "POST"]);
    expect(order(u2.uid, "B").slice(-2)).toEqual(["PUT", "POST"]);
    expect(receiver.received.every((request) => /^Bearer [0-9a-f]{64}$/.test(request.authorization ?? ""))).toBe(true);
  }, 240_000);
});
