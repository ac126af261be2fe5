import { parse } from "csv-parse/sync";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { users } from "../../src/db/schema.js";
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
    for (const page of ["0", "-1", "abc", "99999", "1e3"]) {
      expect((await browser.get(`/applications/${client.application.id}/usage?page=${page}`)).statusCode, page).toBe(400);
    }
    expect((await browser.get("/applications/00000000-0000-4000-8000-000000000000/usage")).statusCode).toBe(404);
    expect((await browser.get("/applications/not-an-id/usage.csv")).statusCode).toBe(404);
  });

  it("is for superadmins only", async () => {
    const client = await createApp(ctx, { name: "Publisher" });
    for (const role of ["admin", "organisation_admin", "normal"] as const) {
      const { browser } = await signedInAs(app, ctx, role);
      expect((await browser.get(`/applications/${client.application.id}/usage`)).statusCode, role).toBe(403);
      expect((await browser.get(`/applications/${client.application.id}/usage.csv`)).statusCode, role).toBe(403);
    }
  });
});
