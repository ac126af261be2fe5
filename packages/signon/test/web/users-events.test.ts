import { describe, expect, it } from "vitest";
import { audit } from "../../src/audit.js";
import { createApp, createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";
import { signedInAs, submitMany } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

/** The cells after the time of each row of the events table, joined with " | ". */
function eventRows(body: string): string[] {
  return [...body.matchAll(/<tr>\s*<td><time[^>]*>[^<]*<\/time><\/td>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] as string).matchAll(/<td>([\s\S]*?)<\/td>/g)].map((cell) => (cell[1] as string).trim()).join(" | "),
  );
}

describe("GET /users/:uid/events", () => {
  it("lists the events where the user is the subject or the actor, newest first, in plain words", async () => {
    const { application } = await createApp(ctx, { name: "Publisher", permissions: ["editor"] });
    const { browser, uid: adminUid } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { name: "Ada" });
    const other = await createUser(ctx, { name: "Bob" });
    signon.clock.advance(60);
    const page = `/users/${target.uid}/permissions`;
    await submitMany(app, browser, page, page, { permissions: [`${application.id}:editor`] });
    signon.clock.advance(60);
    await browser.submit(`/users/${target.uid}`, `/users/${target.uid}/suspend`, { reason: "Left <b>the</b> team", confirm: "yes" });
    signon.clock.advance(60);
    await audit(ctx.db, { action: "sign_in", at: ctx.now(), actorUid: other.uid, subjectUid: other.uid, origin: { ip: "192.0.2.7", userAgent: null } });
    await audit(ctx.db, { action: "permissions_granted", at: ctx.now(), actorUid: target.uid, subjectUid: other.uid, applicationId: application.id, origin: { ip: "192.0.2.8", userAgent: null }, details: { permissions: ["signin"] } });

    const response = await browser.get(`/users/${target.uid}/events`);
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toContain("<b>the</b>");
    const rows = eventRows(response.body);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toBe("Permissions granted: Bob (signin) | Ada | Publisher | 192.0.2.8");
    // Changes made on the pages record where the request came from.
    expect(rows[1]).toMatch(/^Suspended \(reason: Left &lt;b&gt;the&lt;\/b&gt; team\) \| User \d+ \| {2}\| 127\.0\.0\.1$/);
    expect(rows[2]).toMatch(/^Permissions granted \(editor\) \| User \d+ \| Publisher \| 127\.0\.0\.1$/);
    expect(rows[3]).toBe("Account created | Sign-on |  | ");
    expect(textOf(response)).not.toContain("192.0.2.7");
    expect(adminUid).not.toBe(target.uid);
  });

  it("pages 50 events at a time", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const target = await createUser(ctx);
    for (let i = 0; i < 55; i++) {
      signon.clock.advance(1);
      await audit(ctx.db, { action: "sign_in", at: ctx.now(), actorUid: target.uid, subjectUid: target.uid });
    }
    const first = await browser.get(`/users/${target.uid}/events`);
    expect(eventRows(first.body)).toHaveLength(50);
    expect(first.body).toContain(`href="/users/${target.uid}/events?page=2" rel="next"`);
    const second = await browser.get(`/users/${target.uid}/events?page=2`);
    expect(eventRows(second.body)).toHaveLength(6);
    expect(second.body).toContain(`href="/users/${target.uid}/events" rel="prev"`);
    expect((await browser.get(`/users/${target.uid}/events?page=zero`)).statusCode).toBe(400);
  });

  it("refuses normal users", async () => {
    const target = await createUser(ctx);
    const { browser } = await signedInAs(app, ctx, "normal");
    expect((await browser.get(`/users/${target.uid}/events`)).statusCode).toBe(403);
  });
});
