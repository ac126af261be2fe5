import { describe, expect, it } from "vitest";
import { desc } from "drizzle-orm";
import { audit } from "../../src/audit.js";
import { auditEvents } from "../../src/db/schema.js";
import { createApp, createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";
import { signedInAs, submitMany } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

/** Records an audit event and returns its id. */
async function auditedId(entry: Parameters<typeof audit>[1]): Promise<number> {
  await audit(ctx.db, entry);
  const [row] = await ctx.db.select({ id: auditEvents.id }).from(auditEvents).orderBy(desc(auditEvents.id)).limit(1);
  return row?.id as number;
}

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
    expect(rows[0]).toBe("Permissions granted: Bob (signin) | Ada | Publisher | 192.0.2.8 | ");
    // Changes made on the pages record where the request came from, and its browser.
    expect(rows[1]).toMatch(
      /^Suspended \(reason: Left &lt;b&gt;the&lt;\/b&gt; team\); no application issued them a token, so none was told to sign them out \| User \d+ \| {2}\| 127\.0\.0\.1 \| lightMyRequest$/,
    );
    expect(rows[2]).toMatch(/^Permissions granted \(editor\) \| User \d+ \| Publisher \| 127\.0\.0\.1 \| lightMyRequest$/);
    expect(rows[3]).toBe("Account created | Sign-on |  |  | ");
    expect(textOf(response)).not.toContain("192.0.2.7");
    expect(adminUid).not.toBe(target.uid);
  });

  it("pages through older events 50 at a time, each link naming the last event shown", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const target = await createUser(ctx);
    const ids: number[] = [];
    for (let i = 0; i < 100; i++) {
      // Two events a second, so that paging must tell events of one time apart by id.
      if (i % 2 === 0) signon.clock.advance(1);
      ids.push(await auditedId({ action: "sign_in", at: ctx.now(), actorUid: target.uid, subjectUid: target.uid, details: { n: i } }));
    }
    const base = `/users/${target.uid}/events`;
    const first = await browser.get(base);
    expect(eventRows(first.body)).toHaveLength(50);
    // Newest first: events 99 down to 50 of the 100, then 49 down to 0, then the account's creation.
    const fiftieth = ids[50] as number;
    expect(first.body).toContain(`href="${base}?before=${fiftieth}" rel="next"`);
    expect(first.body).not.toContain("Newest events");

    const second = await browser.get(`${base}?before=${fiftieth}`);
    expect(eventRows(second.body)).toHaveLength(50);
    expect(second.body).toContain(`href="${base}">Newest events`);
    const third = await browser.get(`${base}?before=${ids[0] as number}`);
    expect(eventRows(third.body)).toEqual(["Account created | Sign-on |  |  | "]);
    expect(third.body).not.toContain("Older events</a>");

    // An id no event has (or one pruned since) gives an empty page, not an error.
    expect((await browser.get(`${base}?before=999999999999999`)).body).toContain("No older events.");
    for (const bad of ["zero", "0", "-1", "1e3", "9999999999999999", "1&before=2"]) {
      expect((await browser.get(`${base}?before=${bad}`)).statusCode).toBe(400);
    }
    expect((await browser.get(`${base}?page=2`)).statusCode).toBe(400);
  });

  it("shows the browser (User-Agent) each event came from, escaped", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const target = await createUser(ctx, { name: "Ada" });
    const userAgent = "Mozilla/5.0 (X11; Linux x86_64) <script>alert(1)</script> Firefox/128.0";
    await audit(ctx.db, { action: "sign_in", at: ctx.now(), actorUid: target.uid, subjectUid: target.uid, origin: { ip: "192.0.2.9", userAgent } });

    const response = await browser.get(`/users/${target.uid}/events`);
    expect(response.body).toContain('<th scope="col">IP address</th><th scope="col">Browser</th>');
    expect(response.body).not.toContain("<script>alert(1)</script>");
    expect(eventRows(response.body)).toEqual([
      "Signed in | Ada |  | 192.0.2.9 | Mozilla/5.0 (X11; Linux x86_64) &lt;script&gt;alert(1)&lt;/script&gt; Firefox/128.0",
      "Account created | Sign-on |  |  | ",
    ]);
  });

  it("refuses normal users", async () => {
    const target = await createUser(ctx);
    const { browser } = await signedInAs(app, ctx, "normal");
    expect((await browser.get(`/users/${target.uid}/events`)).statusCode).toBe(403);
  });
});
