import { and, eq } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { accountLinks, auditEvents } from "../../src/db/schema.js";
import { findUserByEmail } from "../../src/repositories/users.js";
import { buildTestSignon, openTestDatabase, testConfig } from "../support/signon.js";
import { textOf } from "./account-support.js";
import { signedInAs } from "./users-support.js";

// A mail server that refuses connections: nothing listens on port 1. Log lines are kept to check what they say.
const lines: string[] = [];
const logText = () => lines.join("");
const database = await openTestDatabase();
const { app, ctx } = await buildTestSignon(database, testConfig({ SIGNON_SMTP_URL: "smtp://127.0.0.1:1" }), { level: "info", stream: { write: (line: string) => void lines.push(line) } });
afterAll(async () => {
  await app.close();
  await database.close();
});
beforeEach(async () => {
  await database.reset();
  lines.length = 0;
});

const failedText = "The invitation e-mail could not be sent. Use Resend invitation.";

async function invitationLinkDigests(userUid: string): Promise<string[]> {
  const rows = await ctx.db
    .select({ tokenHash: accountLinks.tokenHash })
    .from(accountLinks)
    .where(and(eq(accountLinks.userUid, userUid), eq(accountLinks.purpose, "invitation")));
  return rows.map((row) => row.tokenHash);
}

describe("POST /users/new when the invitation e-mail cannot be sent", () => {
  it("keeps the account and its link, logs the failure without the link, and shows the user page with an error flash", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const response = await browser.submit("/users/new", "/users/new", { name: "Ada Lovelace", email: "ada@example.org", role: "normal", organisation: "" });
    expect(response.statusCode).toBe(303);
    const invited = await findUserByEmail(ctx.db, "ada@example.org");
    expect(invited).toMatchObject({ name: "Ada Lovelace", passwordHash: null });
    expect(response.headers.location).toBe(`/users/${invited?.uid}`);

    const page = await browser.get(`/users/${invited?.uid}`);
    expect(page.statusCode).toBe(200);
    expect(textOf(page)).toContain(failedText);
    expect(page.body).toContain(`action="/users/${invited?.uid}/resend-invitation"`);
    expect(await invitationLinkDigests(invited?.uid ?? "")).toHaveLength(1);
    const invitedEvents = await ctx.db.select().from(auditEvents).where(eq(auditEvents.action, "user_invited"));
    expect(invitedEvents).toEqual([expect.objectContaining({ subjectUid: invited?.uid })]);

    expect(logText()).toContain("invitation e-mail could not be sent");
    expect(logText()).not.toContain("/invitations/");
    expect(logText()).not.toMatch(/[0-9a-f]{64}/);
  });
});

describe("POST /users/:uid/resend-invitation when the e-mail cannot be sent", () => {
  it("replaces the link, logs the failure and says so in an error flash", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    await browser.submit("/users/new", "/users/new", { name: "Alan Turing", email: "alan@example.org", role: "normal", organisation: "" });
    const invited = await findUserByEmail(ctx.db, "alan@example.org");
    const page = `/users/${invited?.uid}`;
    const before = await invitationLinkDigests(invited?.uid ?? "");
    lines.length = 0;

    const response = await browser.submit(page, `${page}/resend-invitation`);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(page);
    expect(textOf(await browser.get(page))).toContain(failedText);
    const after = await invitationLinkDigests(invited?.uid ?? "");
    expect(after).toHaveLength(1);
    expect(after).not.toEqual(before);
    expect(logText()).toContain("invitation e-mail could not be sent");
    expect(logText()).not.toMatch(/[0-9a-f]{64}/);
  });
});
