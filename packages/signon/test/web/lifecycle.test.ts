import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { deleteNeverUsedInvitations, sendInactivityReminders, startInactivityJob, suspendInactiveUsers } from "../../src/accounts/inactivity.js";
import { inviteUser } from "../../src/accounts/invitations.js";
import { createApiUser, suspendUser } from "../../src/accounts/manage-users.js";
import { audit } from "../../src/audit.js";
import type { SignonContext } from "../../src/context.js";
import { auditEvents, users } from "../../src/db/schema.js";
import { pruneOldEvents } from "../../src/maintenance/event-retention.js";
import { startExpiredRecordsJob } from "../../src/maintenance/expired-records-job.js";
import type { JobLog } from "../../src/maintenance/hourly-job.js";
import { findUserByUid } from "../../src/repositories/users.js";
import { InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { linkMailedTo, mailsTo, strongPassword, textOf } from "./account-support.js";
import { signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;
const day = 86_400;

async function eventsOf(uid: string, action: string) {
  return ctx.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUid, uid), eq(auditEvents.action, action)));
}

async function reminderSubjects(email: string): Promise<string[]> {
  return (await mailsTo(ctx, email)).map((mail) => mail.subject).filter((subject) => subject.includes("will be suspended"));
}

/** A person who signed in now, through the sign-in form. */
async function personWhoSignedIn(password = defaultPassword) {
  const user = await createUser(ctx, { password });
  await signedInBrowser(app, user.email, password);
  return user;
}

describe("inactivity reminders", () => {
  it("mails 14, 7, 3 and 1 days before the suspension, each once, then the job suspends", async () => {
    const user = await personWhoSignedIn();
    signon.clock.advance(31 * day - 1);
    expect(await sendInactivityReminders(ctx)).toEqual([]);
    signon.clock.advance(1);
    expect(await sendInactivityReminders(ctx)).toEqual([{ email: user.email, days: 14 }]);
    // The next hourly runs send nothing more until the next reminder is due.
    signon.clock.advance(3600);
    expect(await sendInactivityReminders(ctx)).toEqual([]);
    signon.clock.advance(7 * day - 3600);
    expect(await sendInactivityReminders(ctx)).toEqual([{ email: user.email, days: 7 }]);
    signon.clock.advance(4 * day);
    expect(await sendInactivityReminders(ctx)).toEqual([{ email: user.email, days: 3 }]);
    signon.clock.advance(2 * day);
    expect(await sendInactivityReminders(ctx)).toEqual([{ email: user.email, days: 1 }]);
    expect(await sendInactivityReminders(ctx)).toEqual([]);
    expect(await suspendInactiveUsers(ctx)).toEqual([]);
    signon.clock.advance(day);
    expect(await sendInactivityReminders(ctx)).toEqual([]);
    expect(await suspendInactiveUsers(ctx)).toEqual([user.email]);

    expect(await reminderSubjects(user.email)).toEqual([
      "Your Tessera Sign-on account will be suspended in 14 days",
      "Your Tessera Sign-on account will be suspended in 7 days",
      "Your Tessera Sign-on account will be suspended in 3 days",
      "Your Tessera Sign-on account will be suspended within a day",
    ]);
    const [first] = await mailsTo(ctx, user.email);
    expect(first?.textBody).toContain("http://localhost:3000/sign-in");
    expect(first?.textBody).toContain("Accounts not used for 45 days are suspended");
    const events = await eventsOf(user.uid, "inactivity_reminder_sent");
    expect(events.map((event) => event.details.days)).toEqual([14, 7, 3, 1]);
  });

  it("remembers what it sent in the database: a restart neither repeats nor skips, and a missed reminder gives only the latest", async () => {
    const user = await personWhoSignedIn();
    signon.clock.advance(32 * day);
    expect(await sendInactivityReminders(ctx)).toEqual([{ email: user.email, days: 14 }]);
    // Another process (or this one restarted) with nothing in memory: same database, nothing again.
    const restarted: SignonContext = { ...ctx };
    expect(await sendInactivityReminders(restarted)).toEqual([]);
    // Not running from 12 days left to 2 days left: only the 3-day reminder, once.
    signon.clock.advance(10 * day);
    expect(await sendInactivityReminders(restarted)).toEqual([{ email: user.email, days: 3 }]);
    expect(await sendInactivityReminders(ctx)).toEqual([]);
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ inactivityReminderDays: 3 });
    expect(await reminderSubjects(user.email)).toEqual([
      "Your Tessera Sign-on account will be suspended in 13 days",
      "Your Tessera Sign-on account will be suspended in 3 days",
    ]);
  });

  it("tries a reminder whose mail could not be sent again at the next run, and goes on with the others", async () => {
    const user = await personWhoSignedIn();
    signon.clock.advance(31 * day);
    const failures: unknown[] = [];
    const noMailServer = { ...ctx, config: { ...ctx.config, mail: { ...ctx.config.mail, smtpUrl: "smtp://127.0.0.1:1" } } };
    expect(await sendInactivityReminders(noMailServer, (error) => failures.push(error))).toEqual([]);
    expect(failures).toHaveLength(1);
    expect(await eventsOf(user.uid, "inactivity_reminder_sent")).toEqual([]);
    expect(await sendInactivityReminders(ctx)).toEqual([{ email: user.email, days: 14 }]);
  });

  it("starts afresh after a sign-in, and leaves out API users, suspended people and people without a password", async () => {
    const user = await personWhoSignedIn();
    const gone = await createUser(ctx);
    await suspendUser(ctx, gone.email, "Left");
    const invited = await createUser(ctx, { password: undefined });
    const robot = await createApiUser(ctx, { email: "robot@example.org", name: "Robot" });
    await ctx.db.update(users).set({ passwordHash: "not-a-password" }).where(eq(users.uid, robot.uid));
    signon.clock.advance(31 * day);
    expect(await sendInactivityReminders(ctx)).toEqual([{ email: user.email, days: 14 }]);
    await signedInBrowser(app, user.email, defaultPassword);
    signon.clock.advance(31 * day);
    expect(await sendInactivityReminders(ctx)).toEqual([{ email: user.email, days: 14 }]);
    expect(await reminderSubjects(gone.email)).toEqual([]);
    expect(await reminderSubjects(invited.email)).toEqual([]);
    expect(await reminderSubjects(robot.email)).toEqual([]);
  });

  it("leaves out reminders as long as the inactivity period itself", async () => {
    const user = await personWhoSignedIn();
    const tenDays = { ...ctx, config: { ...ctx.config, inactivityDays: 10 } };
    expect(await sendInactivityReminders(tenDays)).toEqual([]);
    signon.clock.advance(3 * day);
    expect(await sendInactivityReminders(tenDays)).toEqual([{ email: user.email, days: 7 }]);
  });

  it("are shown in the person's event log", async () => {
    const user = await createUser(ctx);
    signon.clock.advance(38 * day);
    await sendInactivityReminders(ctx);
    const { browser } = await signedInAs(app, ctx, "superadmin");
    expect(textOf(await browser.get(`/users/${user.uid}/events`))).toContain("Reminded by e-mail of the suspension for inactivity (7 days before)");
  });
});

/** A person suspended by the inactivity job, and an administrator's browser. */
async function suspendedForInactivity(password = defaultPassword) {
  const user = await personWhoSignedIn(password);
  signon.clock.advance(45 * day);
  expect(await suspendInactiveUsers(ctx)).toEqual([user.email]);
  const { browser } = await signedInAs(app, ctx, "superadmin");
  return { browser, user };
}

async function unsuspend(browser: InjectBrowser, uid: string, fields: Record<string, string> = {}) {
  return browser.submit(`/users/${uid}`, `/users/${uid}/unsuspend`, fields);
}

describe("POST /users/:uid/unsuspend", () => {
  it("by default requires a new password: the old one stops working and a reset link is mailed", async () => {
    const old = strongPassword();
    const { browser, user } = await suspendedForInactivity(old);
    const page = await browser.get(`/users/${user.uid}`);
    expect(page.body).toContain('<input type="radio" id="new-password-yes" name="new_password" value="yes" checked>');

    const response = await unsuspend(browser, user.uid);
    expect(response.statusCode).toBe(303);
    expect(textOf(await browser.follow(response))).toContain(
      `${user.name} is no longer suspended. Their old password no longer works: a link to choose a new one is e-mailed to ${user.email}.`,
    );
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ suspendedAt: null, newPasswordRequired: true, unsuspendedAt: ctx.now() });
    expect(textOf(await browser.get(`/users/${user.uid}`))).toContain("Password Must choose a new one: the old password no longer works");
    expect((await eventsOf(user.uid, "user_unsuspended")).map((event) => event.details)).toEqual([{ new_password_required: true }]);

    const attempt = await new InjectBrowser(app).signIn("/sign-in", user.email, old);
    expect(attempt.statusCode).toBe(401);
    expect(textOf(attempt)).toContain("This password no longer works: choose a new one through the link we e-mailed you");
    expect((await eventsOf(user.uid, "sign_in_refused")).map((event) => event.details)).toEqual([{ reason: "new_password_required" }]);

    const [mail] = (await mailsTo(ctx, user.email)).filter((sent) => sent.subject === "Choose a new password for Tessera Sign-on");
    expect(mail?.textBody).toContain("Your previous password no longer works.");
    const link = await linkMailedTo(ctx, user.email, "/password-reset/");
    const person = new InjectBrowser(app);
    const same = await person.submit(link, link, { password: old, confirmation: old });
    expect(same.statusCode).toBe(400);
    expect(textOf(same)).toContain("Choose a password you have not used before");
    const password = strongPassword();
    expect((await person.submit(link, link, { password, confirmation: password })).statusCode).toBe(303);
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ newPasswordRequired: false });
    expect((await browser.get(`/users/${user.uid}`)).body).not.toContain("new-password-required");
    expect((await new InjectBrowser(app).signIn("/sign-in", user.email, password)).headers.location).toBe("/");
  });

  it("with new_password=no keeps the old password and sends no mail", async () => {
    const { browser, user } = await suspendedForInactivity();
    const response = await unsuspend(browser, user.uid, { new_password: "no" });
    expect(response.statusCode).toBe(303);
    expect(textOf(await browser.follow(response))).toContain(`${user.name} is no longer suspended.`);
    expect((await eventsOf(user.uid, "user_unsuspended")).map((event) => event.details)).toEqual([{ new_password_required: false }]);
    expect((await mailsTo(ctx, user.email)).map((mail) => mail.subject)).not.toContain("Choose a new password for Tessera Sign-on");
    expect((await new InjectBrowser(app).signIn("/sign-in", user.email, defaultPassword)).headers.location).toBe("/");
  });

  it("with new_password=no lifts a requirement an earlier unsuspension left", async () => {
    const { browser, user } = await suspendedForInactivity();
    await unsuspend(browser, user.uid);
    await suspendUser(ctx, user.email, "Again");
    await unsuspend(browser, user.uid, { new_password: "no" });
    expect(await findUserByUid(ctx.db, user.uid)).toMatchObject({ newPasswordRequired: false });
    expect((await new InjectBrowser(app).signIn("/sign-in", user.email, defaultPassword)).headers.location).toBe("/");
  });

  it("refuses a value other than yes or no, changing nothing", async () => {
    const { browser, user } = await suspendedForInactivity();
    expect((await unsuspend(browser, user.uid, { new_password: "maybe" })).statusCode).toBe(400);
    expect((await findUserByUid(ctx.db, user.uid))?.suspendedAt).not.toBeNull();
  });

  it("gives a week's grace before the inactivity job may suspend again", async () => {
    const { browser, user } = await suspendedForInactivity();
    await unsuspend(browser, user.uid, { new_password: "no" });
    expect(await suspendInactiveUsers(ctx)).toEqual([]);
    // The person is reminded that the grace ends in a week.
    expect(await sendInactivityReminders(ctx)).toEqual([{ email: user.email, days: 7 }]);
    signon.clock.advance(7 * day - 1);
    expect(await suspendInactiveUsers(ctx)).toEqual([]);
    signon.clock.advance(1);
    expect(await suspendInactiveUsers(ctx)).toEqual([user.email]);
  });

  it("signing in during the grace counts as usual: 45 more days", async () => {
    const { browser, user } = await suspendedForInactivity();
    await unsuspend(browser, user.uid, { new_password: "no" });
    signon.clock.advance(3 * day);
    await signedInBrowser(app, user.email, defaultPassword);
    signon.clock.advance(45 * day - 1);
    expect(await suspendInactiveUsers(ctx)).not.toContain(user.email);
    signon.clock.advance(1);
    expect(await suspendInactiveUsers(ctx)).toEqual([user.email]);
  });
});

describe("never-used invitations", () => {
  async function invite(email: string) {
    const admin = await createUser(ctx, { role: "superadmin" });
    return (await inviteUser(ctx, { email, name: "Invitee", role: "normal", organisationId: null }, admin, { ip: "192.0.2.1", userAgent: null })).user;
  }

  it("are deleted 90 days after the invitation, audited with the address; used accounts stay", async () => {
    const invitee = await invite("never@example.org");
    const used = await personWhoSignedIn();
    const accepted = await invite("accepted@example.org");
    const link = await linkMailedTo(ctx, "accepted@example.org", "/invitations/");
    const password = strongPassword();
    await new InjectBrowser(app).submit(link, link, { password, confirmation: password });

    signon.clock.advance(90 * day - 1);
    expect(await deleteNeverUsedInvitations(ctx)).toEqual([]);
    signon.clock.advance(1);
    expect(await deleteNeverUsedInvitations(ctx)).toEqual(["never@example.org"]);
    expect(await deleteNeverUsedInvitations(ctx)).toEqual([]);

    expect(await findUserByUid(ctx.db, invitee.uid)).toBeNull();
    expect(await findUserByUid(ctx.db, used.uid)).not.toBeNull();
    expect(await findUserByUid(ctx.db, accepted.uid)).not.toBeNull();
    const [event] = await eventsOf(invitee.uid, "unused_invitation_deleted");
    expect(event?.details).toEqual({ email: "never@example.org", name: "Invitee", invited_at: new Date(ctx.now().getTime() - 90 * day * 1000).toISOString(), days: 90 });
    // The invitation's own events stay too.
    expect(await eventsOf(invitee.uid, "user_invited")).toHaveLength(1);
  });

  it("count from the latest invitation, and the number of days is configurable", async () => {
    const invitee = await invite("late@example.org");
    signon.clock.advance(60 * day);
    const { browser } = await signedInAs(app, ctx, "superadmin");
    await browser.submit(`/users/${invitee.uid}`, `/users/${invitee.uid}/resend-invitation`);
    signon.clock.advance(89 * day);
    expect(await deleteNeverUsedInvitations(ctx)).toEqual([]);
    const shorter = { ...ctx, config: { ...ctx.config, unusedInvitationDays: 30 } };
    expect(await deleteNeverUsedInvitations(shorter)).toEqual(["late@example.org"]);
  });
});

describe("event retention", () => {
  it("deletes events older than the retention period, in batches, and keeps the rest", async () => {
    const user = await createUser(ctx);
    const now = ctx.now().getTime();
    for (const daysAgo of [800, 731, 730.5, 729, 10]) {
      await audit(ctx.db, { action: "sign_in", at: new Date(now - daysAgo * day * 1000), subjectUid: user.uid, details: { daysAgo } });
    }
    expect(await pruneOldEvents(ctx, 2)).toBe(3);
    const left = await ctx.db.select().from(auditEvents).where(eq(auditEvents.action, "sign_in"));
    expect(left.map((event) => event.details.daysAgo).sort()).toEqual([10, 729]);
    expect(await pruneOldEvents({ ...ctx, config: { ...ctx.config, eventRetentionDays: 30 } })).toBe(1);
    expect(await pruneOldEvents(ctx)).toBe(0);
  });
});

describe("GET /account/activity", () => {
  it("pages through the person's older activity from the account page", async () => {
    const user = await createUser(ctx);
    const browser = await signedInBrowser(app, user.email, defaultPassword);
    for (let i = 0; i < 70; i++) {
      signon.clock.advance(1);
      await audit(ctx.db, { action: "permissions_granted", at: ctx.now(), subjectUid: user.uid, details: { permissions: [`p${i}`] } });
    }
    const rows = (body: string) => [...body.matchAll(/<tr><td><time/g)].length;
    const account = await browser.get("/account");
    expect(rows(account.body)).toBe(20);
    const older = /href="(\/account\/activity\?before=\d+)" rel="next">Older activity/.exec(account.body)?.[1];
    expect(older).toBeDefined();
    const second = await browser.get(older as string);
    expect(second.statusCode).toBe(200);
    expect(rows(second.body)).toBe(50);
    const third = await browser.get(/href="(\/account\/activity\?before=\d+)" rel="next"/.exec(second.body)?.[1] as string);
    const all = await ctx.db.select().from(auditEvents).where(eq(auditEvents.subjectUid, user.uid));
    expect(rows(third.body)).toBe(all.length - 70);
    expect(third.body).not.toContain('rel="next"');
    expect(textOf(third)).toContain("Your account was created");

    expect((await browser.get("/account/activity")).statusCode).toBe(400);
    expect((await browser.get("/account/activity?before=abc")).statusCode).toBe(400);
    expect((await new InjectBrowser(app).get(older as string)).statusCode).toBe(303);
  });
});

/** Starts a job, waits until it has logged `count` lines, stops it and returns them. */
async function logLines(count: number, start: (options: { firstRunMs: number; log: JobLog }) => { stop(): Promise<void> }): Promise<string[]> {
  const lines: string[] = [];
  let done!: () => void;
  const logged = new Promise<void>((resolve) => (done = resolve));
  const record = (message: string) => {
    lines.push(message);
    if (lines.length === count) done();
  };
  const job = start({ firstRunMs: 1, log: { info: record, error: record } });
  await logged;
  await job.stop();
  return lines;
}

describe("the hourly jobs", () => {
  it("the inactivity job reminds, suspends and deletes never-used invitations in one run", async () => {
    const admin = await createUser(ctx, { role: "superadmin" });
    await inviteUser(ctx, { email: "never@example.org", name: "Never", role: "normal", organisationId: null }, admin, { ip: null, userAgent: null });
    signon.clock.advance(60 * day);
    const reminded = await personWhoSignedIn();
    signon.clock.advance(31 * day);
    const lines = await logLines(3, (options) => startInactivityJob(ctx, options));
    expect(lines).toEqual([
      "Sent 1 inactivity reminder(s)",
      "Suspended 2 account(s) not signed in for 45 days",
      "Deleted 1 invitation(s) not used in 90 days",
    ]);
    expect(await reminderSubjects(reminded.email)).toEqual(["Your Tessera Sign-on account will be suspended in 14 days"]);
  });

  it("the expired-records job prunes old audit events", async () => {
    const user = await createUser(ctx);
    await audit(ctx.db, { action: "sign_in", at: new Date(ctx.now().getTime() - 800 * day * 1000), subjectUid: user.uid });
    const lines = await logLines(1, (options) => startExpiredRecordsJob(ctx, options));
    expect(lines).toEqual(["Deleted 1 audit event(s) older than 730 days"]);
  });
});
