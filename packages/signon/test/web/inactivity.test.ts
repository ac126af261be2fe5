import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { startInactivityJob, suspendInactiveUsers } from "../../src/accounts/inactivity.js";
import { createApiUser, suspendUser } from "../../src/accounts/manage-users.js";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { accessTokens, auditEvents, pushDeliveries, sessions, users } from "../../src/db/schema.js";
import { findUserByUid } from "../../src/repositories/users.js";
import { signedInBrowser } from "../support/browser.js";
import { runSignonCli } from "../support/cli.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();
const day = 86_400;

describe("suspendInactiveUsers", () => {
  it("suspends people not signed in for 45 days, through the usual suspension", async () => {
    await createApp(signon.ctx, { name: "Publisher", pushBaseUrl: "https://publisher.example" });
    const idle = await createUser(signon.ctx, { permissions: { Publisher: ["signin"] } });
    await signedInBrowser(signon.app, idle.email, defaultPassword);
    await issueOperatorToken(signon.ctx, { email: idle.email, application: "Publisher" });
    signon.clock.advance(44 * day);
    const active = await createUser(signon.ctx);
    await signedInBrowser(signon.app, active.email, defaultPassword);
    await database.db.delete(pushDeliveries);

    expect(await suspendInactiveUsers(signon.ctx)).toEqual([]);
    signon.clock.advance(day);
    expect(await suspendInactiveUsers(signon.ctx)).toEqual([idle.email]);

    expect(await findUserByUid(signon.ctx.db, idle.uid)).toMatchObject({ suspensionReason: "Not signed in for 45 days" });
    expect((await findUserByUid(signon.ctx.db, active.uid))?.suspendedAt).toBeNull();
    expect(await database.db.select().from(sessions).where(eq(sessions.userUid, idle.uid))).toEqual([]);
    const tokens = await database.db.select().from(accessTokens).where(eq(accessTokens.userUid, idle.uid));
    expect(tokens.map((token) => token.revokedAt)).toEqual([signon.clock.now()]);
    const pushes = await database.db.select().from(pushDeliveries).where(eq(pushDeliveries.userUid, idle.uid));
    expect(pushes.map((push) => push.kind).sort()).toEqual(["reauth", "update"]);
    const events = await database.db.select().from(auditEvents).where(eq(auditEvents.subjectUid, idle.uid));
    expect(events.map((event) => event.action)).toEqual(expect.arrayContaining(["user_suspended", "suspended_for_inactivity"]));
  });

  it("counts from the account's creation for someone who never signed in, and leaves API users and suspended people alone", async () => {
    const never = await createUser(signon.ctx);
    const robot = await createApiUser(signon.ctx, { email: "robot@example.org", name: "Robot" });
    const gone = await createUser(signon.ctx);
    await suspendUser(signon.ctx, gone.email, "Left the team");
    signon.clock.advance(45 * day - 1);
    expect(await suspendInactiveUsers(signon.ctx)).toEqual([]);
    signon.clock.advance(1);
    expect(await suspendInactiveUsers(signon.ctx)).toEqual([never.email]);
    expect((await findUserByUid(signon.ctx.db, robot.uid))?.suspendedAt).toBeNull();
    expect((await findUserByUid(signon.ctx.db, gone.uid))?.suspensionReason).toBe("Left the team");
    expect(await suspendInactiveUsers(signon.ctx)).toEqual([]);
  });

  it("suspends a person once when the jobs of two instances run at the same moment", async () => {
    const idle = await createUser(signon.ctx);
    signon.clock.advance(45 * day);
    const runs = await Promise.all([suspendInactiveUsers(signon.ctx), suspendInactiveUsers(signon.ctx), suspendInactiveUsers(signon.ctx)]);
    expect(runs.flat()).toEqual([idle.email]);
    const events = await database.db.select().from(auditEvents).where(eq(auditEvents.subjectUid, idle.uid));
    expect(events.map((event) => event.action).sort()).toEqual(["suspended_for_inactivity", "user_created", "user_suspended"]);
  });

  it("uses the configured number of days", async () => {
    const user = await createUser(signon.ctx);
    signon.clock.advance(10 * day);
    const ctx = { ...signon.ctx, config: { ...signon.ctx.config, inactivityDays: 10 } };
    expect(await suspendInactiveUsers(ctx)).toEqual([user.email]);
    expect((await findUserByUid(signon.ctx.db, user.uid))?.suspensionReason).toBe("Not signed in for 10 days");
  });
});

describe("startInactivityJob", () => {
  it("runs soon after start, and stops", async () => {
    const user = await createUser(signon.ctx);
    signon.clock.advance(46 * day);
    const messages: string[] = [];
    let ran!: () => void;
    const done = new Promise<void>((resolve) => (ran = resolve));
    const job = startInactivityJob(signon.ctx, {
      firstRunMs: 1,
      log: { info: (message) => (messages.push(message), ran()), error: (message) => (messages.push(message), ran()) },
    });
    await done;
    await job.stop();
    expect(messages).toEqual(["Suspended 1 account(s) not signed in for 45 days"]);
    expect((await findUserByUid(signon.ctx.db, user.uid))?.suspendedAt).not.toBeNull();
  });
});

describe("signon users suspend-inactive", () => {
  it("suspends inactive people and says whom", async () => {
    const user = await createUser(signon.ctx, { email: "idle@example.org" });
    // The CLI reads the real clock: make the account two real days old.
    await database.db.update(users).set({ createdAt: new Date(Date.now() - 2 * day * 1000) }).where(eq(users.uid, user.uid));
    const run = () => runSignonCli(database.url, ["users", "suspend-inactive", "--json"], { SIGNON_INACTIVITY_DAYS: "1" });
    const first = await run();
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ days: 1, suspended: [user.email] });
    const second = await run();
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({ days: 1, suspended: [] });
  });
});
