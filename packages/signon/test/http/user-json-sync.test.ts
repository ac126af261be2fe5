import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { userApplicationSyncs } from "../../src/db/schema.js";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { claimDuePushes, finishPushes } from "../../src/repositories/push-deliveries.js";
import { signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { getUserJson } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();
const db = database.db;

async function syncsOf(uid: string) {
  return db
    .select({ applicationId: userApplicationSyncs.applicationId, at: userApplicationSyncs.lastSyncedAt, by: userApplicationSyncs.lastSyncedBy })
    .from(userApplicationSyncs)
    .where(eq(userApplicationSyncs.userUid, uid));
}

describe("GET /user.json records the application's last sync of the user", () => {
  it("writes on the first call, not again within a minute, and again after it", async () => {
    const client = await createApp(signon.ctx, { name: "Publisher" });
    const person = await createUser(signon.ctx, { permissions: { Publisher: ["signin"] } });
    const { accessToken } = await issueOperatorToken(signon.ctx, { email: person.email, application: "Publisher" });
    const first = signon.clock.now();

    expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(200);
    expect(await syncsOf(person.uid)).toEqual([{ applicationId: client.application.id, at: first, by: "user_json" }]);

    signon.clock.advance(30);
    expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(200);
    expect(await syncsOf(person.uid)).toEqual([{ applicationId: client.application.id, at: first, by: "user_json" }]);

    signon.clock.advance(31);
    const later = signon.clock.now();
    expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(200);
    expect(await syncsOf(person.uid)).toEqual([{ applicationId: client.application.id, at: later, by: "user_json" }]);
  });

  it("records nothing for a refused token", async () => {
    await createApp(signon.ctx, { name: "Publisher" });
    const person = await createUser(signon.ctx, { permissions: { Publisher: ["signin"] } });
    expect((await getUserJson(signon.app, "f".repeat(64))).statusCode).toBe(401);
    expect(await syncsOf(person.uid)).toEqual([]);
  });
});

describe("a delivered push records the application's last sync of the user", () => {
  it("counts a delivered PUT, not a failed one, and the user page shows each application's last sync", async () => {
    const client = await createApp(signon.ctx, { name: "Publisher" });
    await createApp(signon.ctx, { name: "Other" });
    const person = await createUser(signon.ctx, { name: "Ada Synced", permissions: { Publisher: ["signin"], Other: ["signin"] } });
    const now = signon.clock.now();
    const claimed = await claimDuePushes(db, { limit: 10, now, leaseSeconds: 30, leaseToken: "00000000-0000-4000-8000-000000000001" });
    expect(claimed).toHaveLength(2);
    await finishPushes(
      db,
      claimed.map((push) => ({
        id: push.id,
        leaseToken: push.leaseToken,
        seq: push.seq,
        status: push.applicationId === client.application.id ? ("delivered" as const) : ("failed" as const),
        nextAttemptAt: now,
        error: push.applicationId === client.application.id ? null : "HTTP 404",
      })),
      now,
    );
    expect(await syncsOf(person.uid)).toEqual([{ applicationId: client.application.id, at: now, by: "push" }]);

    const admin = await createUser(signon.ctx, { role: "superadmin" });
    const browser = await signedInBrowser(signon.app, admin.email, defaultPassword);
    const page = await browser.get(`/users/${person.uid}`);
    const shown = `${now.toISOString().slice(0, 16).replace("T", " ")} UTC`;
    expect(page.body).toContain(
      `<tr><th scope="row">Publisher</th><td><time datetime="${now.toISOString()}">${shown}</time></td><td>a change was pushed to it</td></tr>`,
    );
    expect(page.body).not.toMatch(/<th scope="row">Other<\/th>/);
    const nobody = await createApiUser(signon.ctx, { name: "Robot", email: "robot@example.org" });
    expect(await syncsOf(nobody.uid)).toEqual([]);
  });
});
