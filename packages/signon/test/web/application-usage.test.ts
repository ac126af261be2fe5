import { parse } from "csv-parse/sync";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { applicationMonthlyUsers } from "../../src/applications/usage.js";
import { applicationUsageMonths, auditEvents, users } from "../../src/db/schema.js";
import { pruneOldEvents } from "../../src/maintenance/event-retention.js";
import { createApp, createUser } from "../support/factories.js";
import { obtainCode } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";
import { signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx, clock } = signon;

describe("GET /applications/:id/usage and /usage.csv", () => {
  it("shows who signed in and when, newest first, and unique users per month; the CSV holds every sign-in", async () => {
    const client = await createApp(ctx, { name: "Publisher" });
    const other = await createApp(ctx, { name: "Other" });
    const ada = await createUser(ctx, { name: "Ada", email: "ada@example.org", permissions: { Publisher: ["signin"], Other: ["signin"] } });
    const grace = await createUser(ctx, { name: "=Grace", email: "grace@example.org", permissions: { Publisher: ["signin"] } });
    const start = clock.now();
    await obtainCode(app, client, ada.email);
    clock.advance(3600);
    await obtainCode(app, client, ada.email);
    await obtainCode(app, other, ada.email);
    clock.advance(40 * 86_400); // into the next month
    const later = clock.now();
    await obtainCode(app, client, grace.email);

    const { browser } = await signedInAs(app, ctx, "superadmin");
    const page = await browser.get(`/applications/${client.application.id}/usage`);
    expect(page.statusCode).toBe(200);
    const month = (at: Date) => at.toISOString().slice(0, 7);
    expect(page.body).toContain(`<tr><th scope="row">${month(later)}</th><td>1</td><td>1</td></tr>`);
    expect(page.body).toContain(`<tr><th scope="row">${month(start)}</th><td>1</td><td>2</td></tr>`);
    expect(page.body.match(/<tr><th scope="row">\d{4}-\d{2}<\/th>/g)).toHaveLength(12);
    const rows = [...page.body.matchAll(/<tr><td><time datetime="([^"]+)">[^<]*<\/time><\/td><td><a href="\/users\/([^"]+)">/g)].map((match) => [match[1], match[2]]);
    expect(rows).toEqual([
      [later.toISOString(), grace.uid],
      [new Date(start.getTime() + 3_600_000).toISOString(), ada.uid],
      [start.toISOString(), ada.uid],
    ]);

    const csv = await browser.get(`/applications/${client.application.id}/usage.csv`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(csv.headers["content-disposition"]).toBe('attachment; filename="sign-ins.csv"');
    expect(parse(csv.body)).toEqual([
      ["signed_in_at", "uid", "name", "email"],
      [later.toISOString(), grace.uid, "'=Grace", "grace@example.org"],
      [new Date(start.getTime() + 3_600_000).toISOString(), ada.uid, "Ada", "ada@example.org"],
      [start.toISOString(), ada.uid, "Ada", "ada@example.org"],
    ]);
    await ctx.db.delete(users).where(eq(users.uid, grace.uid));
    expect((await browser.get(`/applications/${client.application.id}/usage`)).body).toContain("A deleted account");
  });

  it("pages the log, answers 400 to a bad page and 404 to an unknown application", async () => {
    const client = await createApp(ctx, { name: "Publisher" });
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const empty = await browser.get(`/applications/${client.application.id}/usage`);
    expect(empty.body).toContain("Nobody has signed in to Publisher yet.");
    for (const query of ["page=2", "before=0", "before=-1", "before=abc", "before=1e3", "before=99999999999999999999"]) {
      expect((await browser.get(`/applications/${client.application.id}/usage?${query}`)).statusCode, query).toBe(400);
    }
    expect((await browser.get("/applications/00000000-0000-4000-8000-000000000000/usage")).statusCode).toBe(404);
    expect((await browser.get("/applications/not-an-id/usage.csv")).statusCode).toBe(404);
  });

  it("pages the log 50 at a time, older pages by keyset (the last sign-in shown), even when sign-ins share a time", async () => {
    const client = await createApp(ctx, { name: "Busy" });
    const person = await createUser(ctx, { name: "Frequent", permissions: { Busy: ["signin"] } });
    const at = clock.now();
    await ctx.db.insert(auditEvents).values(
      Array.from({ length: 53 }, (_, i) => ({ occurredAt: new Date(at.getTime() - Math.floor(i / 2) * 1000), action: "authorization_code_issued", subjectUid: person.uid, applicationId: client.application.id })),
    );
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const times = (body: string) => [...body.matchAll(/<tr><td><time datetime="([^"]+)">/g)].map((match) => match[1]);
    const first = await browser.get(`/applications/${client.application.id}/usage`);
    expect(times(first.body)).toHaveLength(50);
    const older = /<a href="([^"]*)">Older sign-ins<\/a>/.exec(first.body)?.[1];
    expect(older).toMatch(/\?before=\d+$/);
    const second = await browser.get(older as string);
    expect(times(second.body)).toHaveLength(3);
    expect([...times(first.body), ...times(second.body)]).toEqual([...times(first.body), ...times(second.body)].sort().reverse());
    expect(second.body).not.toContain("Older sign-ins");
    expect(second.body).toContain(`<a href="/applications/${client.application.id}/usage">Newest sign-ins</a>`);
  });

  it("is for superadmins only", async () => {
    const client = await createApp(ctx, { name: "Publisher" });
    for (const role of ["admin", "organisation_admin", "normal"] as const) {
      const { browser } = await signedInAs(app, ctx, role);
      expect((await browser.get(`/applications/${client.application.id}/usage`)).statusCode, role).toBe(403);
      expect((await browser.get(`/applications/${client.application.id}/usage.csv`)).statusCode, role).toBe(403);
    }
  });

  it("cover the event retention period: pruned sign-ins leave the page working, and months the log no longer covers are left out", async () => {
    const client = await createApp(ctx, { name: "Archive" });
    const ada = await createUser(ctx, { name: "Ada", email: "ada.archive@example.org", permissions: { Archive: ["signin"] } });
    await obtainCode(app, client, ada.email);
    clock.advance((ctx.config.eventRetentionDays + 1) * 86_400);
    await pruneOldEvents(ctx);
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const page = await browser.get(`/applications/${client.application.id}/usage`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`The audit log keeps ${ctx.config.eventRetentionDays} days, so these figures cover that period at most.`);
    expect(page.body).toContain("Nobody has signed in to Archive yet.");
    expect(page.body.match(/<tr><th scope="row">\d{4}-\d{2}<\/th><td>0<\/td><td>0<\/td><\/tr>/g)).toHaveLength(12);

    const shortRetention = { ...ctx, config: { ...ctx.config, eventRetentionDays: 45 } };
    const months = (await applicationMonthlyUsers(shortRetention, client.application.id)).map((row) => row.month);
    const cutoffMonth = new Date(ctx.now().getTime() - 45 * 86_400_000).toISOString().slice(0, 7);
    expect(months[0]).toBe(ctx.now().toISOString().slice(0, 7));
    expect(months.length).toBeLessThanOrEqual(3);
    expect(months.every((month) => month >= cutoffMonth)).toBe(true);
  });

  it("counts a month that has ended once and keeps its figures, and counts the month in progress on each view", async () => {
    const client = await createApp(ctx, { name: "Ledger" });
    const ada = await createUser(ctx, { name: "Ada", email: "ada.ledger@example.org", permissions: { Ledger: ["signin"] } });
    const grace = await createUser(ctx, { name: "Grace", email: "grace.ledger@example.org", permissions: { Ledger: ["signin"] } });
    const past = clock.now().toISOString().slice(0, 7);
    await obtainCode(app, client, ada.email);
    await obtainCode(app, client, grace.email);
    clock.advance(40 * 86_400); // into the next month, past its first hour
    const current = clock.now().toISOString().slice(0, 7);
    await obtainCode(app, client, ada.email);
    const figuresOf = async (month: string) => (await applicationMonthlyUsers(ctx, client.application.id)).find((row) => row.month === month);

    expect(await figuresOf(past)).toEqual({ month: past, users: 2, signIns: 2 });
    expect(await figuresOf(current)).toEqual({ month: current, users: 1, signIns: 1 });
    const kept = await ctx.db.select().from(applicationUsageMonths).where(eq(applicationUsageMonths.applicationId, client.application.id));
    // Every month that has ended is kept, those without sign-ins as 0; the month in progress is not.
    expect(kept).toHaveLength(11);
    expect(kept.find((row) => row.month === past)).toMatchObject({ users: 2, signIns: 2 });
    expect(kept.some((row) => row.month === current)).toBe(false);

    // Kept figures are read, not counted again: a kept month changed by hand shows as changed.
    await ctx.db.update(applicationUsageMonths).set({ users: 7 }).where(eq(applicationUsageMonths.month, past));
    await obtainCode(app, client, grace.email);
    expect(await figuresOf(past)).toEqual({ month: past, users: 7, signIns: 2 });
    expect(await figuresOf(current)).toEqual({ month: current, users: 2, signIns: 2 });
  });
});
