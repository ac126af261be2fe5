import { freePort, useTestDatabase } from "@tessera/db/testing";
import { signonMigrations } from "@tessera/signon";
import { afterAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { SignonCallerResolver } from "../../src/auth/signon-caller-resolver.js";
import { DEFAULT_AGGREGATOR_TYPES } from "../../src/config.js";
import { createContext } from "../../src/context.js";
import { COMPLETION_MIGRATIONS } from "../../src/db/database.js";
import * as schema from "../../src/db/schema.js";
import { COMPLETION_APP, startRealSignon } from "../support/real-signon.js";

// Completion listening on a real port, registered in the real Sign-on with its push address, and trusting a
// caller's /user.json answer for 30 s on a clock that never moves: only a push can make it ask again.
const database = await useTestDatabase({ migrations: [signonMigrations, COMPLETION_MIGRATIONS], schema, label: "completion_pushes" });
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const signon = await startRealSignon(database, { pushBase: `${origin}/auth/gds/api` });
const callers = new SignonCallerResolver({ signonUrl: signon.url, clientId: signon.clientId, cacheSeconds: 30, clock: { now: () => 1_000_000 } });
const ctx = createContext({ aggregatorTypes: DEFAULT_AGGREGATOR_TYPES, rebuildStaleFromScratch: false, preparedStatements: true }, database.db, callers);
const app = await buildApp(ctx, { signonPushes: callers.verifier });
await app.listen({ host: "127.0.0.1", port });
afterAll(async () => {
  await app.close();
  await signon.close();
  await database.close();
});

/** A staff caller gets 404 (no such learner), anyone else 403, and a refused token 401. */
const SOMEONE_ELSES = `${origin}/api/completion/v1/course/?username=nobody-here`;

async function get(url: string, token: string): Promise<number> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  return response.status;
}

interface ListedPush {
  user_uid: string;
  application: string;
  kind: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

/** Waits until Sign-on has no push to `completion` about `uid` left pending; returns them all. */
async function pushesDelivered(uid: string): Promise<ListedPush[]> {
  for (;;) {
    const { pushes } = (await signon.cli("pushes", "list")) as unknown as { pushes: ListedPush[] };
    const mine = pushes.filter((push) => push.user_uid === uid && push.application === COMPLETION_APP);
    if (mine.length > 0 && mine.every((push) => push.status !== "pending")) return mine;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("Sign-on's pushes to Completion", () => {
  it("a suspension pushed to Completion makes the next request with the user's token 401, without waiting for the cache", async () => {
    const { token, uid } = await signon.tokenFor("ada@example.com", ["staff"]);
    await pushesDelivered(uid);
    expect(await get(SOMEONE_ELSES, token)).toBe(404);

    await signon.cli("users", "suspend", "--email", "ada@example.com", "--reason", "left");
    const delivered = await pushesDelivered(uid);

    expect(delivered.map(({ kind, status, last_error }) => ({ kind, status, last_error })).sort((a, b) => a.kind.localeCompare(b.kind))).toEqual([
      { kind: "reauth", status: "delivered", last_error: null },
      { kind: "update", status: "delivered", last_error: null },
    ]);
    expect(await get(SOMEONE_ELSES, token)).toBe(401);
  });

  it("a revoked permission pushed to Completion holds from the next request", async () => {
    const { token, uid } = await signon.tokenFor("bea@example.com", ["staff"]);
    await pushesDelivered(uid);
    expect(await get(SOMEONE_ELSES, token)).toBe(404);

    await signon.cli("permissions", "revoke", "--email", "bea@example.com", "--app", COMPLETION_APP, "--permissions", "staff");
    await pushesDelivered(uid);

    expect(await get(SOMEONE_ELSES, token)).toBe(403);
  });

  it("without a push, the remembered answer stands for the cache time", async () => {
    const { token, uid } = await signon.tokenFor("cy@example.com", ["staff"]);
    // The grant's own push must have arrived first, or it would drop the answer remembered below.
    await pushesDelivered(uid);
    expect(await get(SOMEONE_ELSES, token)).toBe(404);

    // Revoked straight in the database: no push is queued.
    await database.pool.query(
      `delete from signon.user_permissions p using signon.users u, signon.applications a
        where p.user_uid = u.uid and u.email = 'cy@example.com' and a.id = p.application_id and a.name = $1 and p.permission = 'staff'`,
      [COMPLETION_APP],
    );

    expect(await get(SOMEONE_ELSES, token)).toBe(404);
  });

  it("refuses a push without Sign-on's push credential", async () => {
    const { token, uid } = await signon.tokenFor("dee@example.com", ["staff", "admin"]);

    const response = await fetch(`${origin}/auth/gds/api/users/${uid}/reauth`, { method: "POST", headers: { authorization: `Bearer ${token}` } });

    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: "insufficient_scope", error_description: "The bearer token's user lacks: user_update_permission." });
  });

  it.each([
    ["a body that is not a user", "x", { user: { uid: "x", permissions: "staff" } }],
    ["a NUL character in the uid", "x%00", { user: { uid: "x\u0000", name: "X", email: "x@example.com", permissions: ["signin"] } }],
  ])("answers 400 invalid_request to a push with %s", async (_case, uid, body) => {
    const { token, uid: pusher } = await signon.tokenFor("pusher@example.com");
    // What Sign-on's own push credential holds; no operator command grants it.
    await database.pool.query(
      `insert into signon.user_permissions (user_uid, application_id, permission, created_at)
       select $1, id, 'user_update_permission', now() from signon.applications where name = $2 on conflict do nothing`,
      [pusher, COMPLETION_APP],
    );

    const response = await fetch(`${origin}/auth/gds/api/users/${uid}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "invalid_request", error_description: expect.any(String) as unknown });
  });
});
