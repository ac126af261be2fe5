import { parse } from "csv-parse/sync";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { suspendUser } from "../../src/accounts/manage-users.js";
import { neutraliseFormula } from "../../src/accounts/users-csv.js";
import { InjectBrowser } from "../support/browser.js";
import { createApp, createUser, lockUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";
import { createTestOrganisation, listedNames, signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

describe("GET /users", () => {
  it("sends a visitor who is not signed in to the sign-in page", async () => {
    const response = await new InjectBrowser(app).get("/users");
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/sign-in?return_to=%2Fusers");
  });

  it("refuses normal users", async () => {
    const { browser } = await signedInAs(app, ctx, "normal");
    const response = await browser.get("/users");
    expect(response.statusCode).toBe(403);
    expect(textOf(response)).toContain("You cannot do that");
  });

  it("lists people with their role, organisation, status and last sign-in, without API users", async () => {
    const organisation = await createTestOrganisation(ctx, "Department of Tests");
    const { browser } = await signedInAs(app, ctx, "admin");
    await createUser(ctx, { name: "Ada Lovelace", email: "ada@example.org", organisationId: organisation.id });
    await createUser(ctx, { name: "Bob Suspended", email: "bob@example.org" }).then((bob) => suspendUser(ctx, bob.email, "Left"));
    await createUser(ctx, { name: "Cy Invited", email: "cy@example.org", password: undefined });
    const { createApiUser } = await import("../../src/accounts/manage-users.js");
    await createApiUser(ctx, { name: "Robot", email: "robot@example.org" });

    const response = await browser.get("/users");
    expect(response.statusCode).toBe(200);
    const names = listedNames(response);
    expect(names).toEqual(expect.arrayContaining(["Ada Lovelace", "Bob Suspended", "Cy Invited"]));
    expect(names).not.toContain("Robot");
    const text = textOf(response);
    expect(text).toContain("Ada Lovelace ada@example.org Normal user Department of Tests active Never");
    expect(text).toContain("Bob Suspended bob@example.org Normal user None suspended");
    expect(text).toContain("Cy Invited cy@example.org Normal user None invited");
    expect(text).toMatch(/User \d+ user\d+@example\.org Admin None active \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
  });

  it("searches names and e-mail addresses without regard to case, taking % and _ literally", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    await createUser(ctx, { name: "Grace Hopper", email: "grace@navy.example" });
    await createUser(ctx, { name: "Percent 100% Sure", email: "p@example.org" });
    await createUser(ctx, { name: "Under_score", email: "u@example.org" });
    await createUser(ctx, { name: "Undersxcore", email: "x@example.org" });

    expect(listedNames(await browser.get("/users?q=HOPPER"))).toEqual(["Grace Hopper"]);
    expect(listedNames(await browser.get("/users?q=NAVY.example"))).toEqual(["Grace Hopper"]);
    expect(listedNames(await browser.get("/users?q=%25"))).toEqual(["Percent 100% Sure"]);
    expect(listedNames(await browser.get("/users?q=r_s"))).toEqual(["Under_score"]);
    const none = await browser.get("/users?q=nobody");
    expect(listedNames(none)).toEqual([]);
    expect(textOf(none)).toContain("No users match these filters.");
  });

  it("searches without regard to case in every script, not only in ASCII", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    await createUser(ctx, { name: "Zoë Ångström", email: "zoe@example.org" });
    await createUser(ctx, { name: "Σωκράτης Παππάς", email: "sokratis@example.org" });
    for (const q of ["ZOË", "zoë", "ÅNGSTRÖM", "ZOE\u0308"]) expect(listedNames(await browser.get(`/users?q=${encodeURIComponent(q)}`)), q).toEqual(["Zoë Ångström"]);
    expect(listedNames(await browser.get(`/users?q=${encodeURIComponent("σωκράτης")}`))).toEqual(["Σωκράτης Παππάς"]);
    // A name given as a base letter and a combining mark is stored composed, and found either way.
    const decomposed = await createUser(ctx, { name: "Chloe\u0308 Brontë", email: "chloe@example.org" });
    expect(decomposed.name).toBe("Chloë Brontë");
    for (const q of ["CHLOË", "chloe\u0308"]) expect(listedNames(await browser.get(`/users?q=${encodeURIComponent(q)}`)), q).toEqual(["Chloë Brontë"]);
  });

  it("filters by role, organisation, status and permission", async () => {
    const organisation = await createTestOrganisation(ctx);
    const { application } = await createApp(ctx, { permissions: ["editor"] });
    const { browser } = await signedInAs(app, ctx, "superadmin");
    await createUser(ctx, { name: "Org Member", organisationId: organisation.id });
    await createUser(ctx, { name: "Org Admin", role: "organisation_admin", organisationId: organisation.id });
    await createUser(ctx, { name: "Editor", permissions: { [application.name]: ["signin", "editor"] } });
    await createUser(ctx, { name: "Signer", permissions: { [application.name]: ["signin"] } });
    const locked = await createUser(ctx, { name: "Locked Out" });
    await lockUser(ctx, locked.uid);
    await createUser(ctx, { name: "Not Yet", password: undefined });

    expect(listedNames(await browser.get("/users?role=organisation_admin"))).toEqual(["Org Admin"]);
    expect(listedNames(await browser.get(`/users?organisation=${organisation.id}`))).toEqual(["Org Admin", "Org Member"]);
    expect(listedNames(await browser.get(`/users?organisation=${organisation.id}&role=normal`))).toEqual(["Org Member"]);
    expect(listedNames(await browser.get(`/users?permission=${application.id}:editor`))).toEqual(["Editor"]);
    expect(listedNames(await browser.get(`/users?permission=${application.id}:signin`))).toEqual(["Editor", "Signer"]);
    expect(listedNames(await browser.get("/users?status=locked"))).toEqual(["Locked Out"]);
    expect(listedNames(await browser.get("/users?status=invited"))).toEqual(["Not Yet"]);
    const active = listedNames(await browser.get("/users?status=active"));
    expect(active).not.toContain("Locked Out");
    expect(active).not.toContain("Not Yet");
    expect(active).toContain("Editor");
    expect(listedNames(await browser.get("/users?status=active&q=&role=&organisation=&permission="))).toEqual(active);
  });

  it("lets a lock lift after an hour", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const locked = await createUser(ctx, { name: "Locked Out" });
    await lockUser(ctx, locked.uid);
    signon.clock.advance(3601);
    expect(listedNames(await browser.get("/users?status=locked"))).toEqual([]);
  });

  it("pages 50 people at a time by name, with next, previous, first and last links that keep the filters", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    for (let i = 0; i < 52; i++) await createUser(ctx, { name: `Member ${String(i).padStart(2, "0")}`, password: undefined });
    const link = (page: { body: string }, label: string) => {
      const href = new RegExp(`<a href="([^"]*)"[^>]*>${label}</a>`).exec(page.body)?.[1];
      return href === undefined ? undefined : href.replaceAll("&amp;", "&");
    };
    const members = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `Member ${String(from + i).padStart(2, "0")}`);

    const first = await browser.get("/users?q=member&status=invited");
    expect(listedNames(first)).toEqual(members(0, 49));
    expect(textOf(first)).toContain("52 people match.");
    expect(textOf(first)).toContain("Download this list as CSV (52 rows)");
    expect(first.body).not.toContain('rel="prev"');
    expect(link(first, "First page")).toBeUndefined();
    const next = link(first, "Next page");
    expect(next).toMatch(/^\/users\?q=member&status=invited&after=[A-Za-z0-9_-]+\.[0-9a-f-]{36}$/);
    expect(next).not.toContain("page=");

    const second = await browser.get(next as string);
    expect(listedNames(second)).toEqual(members(50, 51));
    expect(second.body).not.toContain('rel="next"');
    expect(link(second, "First page")).toBe("/users?q=member&status=invited");
    const back = await browser.get(link(second, "Previous page") as string);
    expect(listedNames(back)).toEqual(members(0, 49));

    const last = await browser.get(link(first, "Last page") as string);
    expect(listedNames(last)).toEqual(members(2, 51));
    expect(last.body).not.toContain('rel="next"');
    // The page before the last holds fewer than 50: the first page is shown instead.
    expect(listedNames(await browser.get(link(last, "Previous page") as string))).toEqual(members(0, 49));
  });

  it("keeps its place when a person is added before the page being read", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    for (let i = 0; i < 51; i++) await createUser(ctx, { name: `Reader ${String(i).padStart(2, "0")}`, password: undefined });
    const first = await browser.get("/users?q=reader");
    const next = /<a href="([^"]*)" rel="next">/.exec(first.body)?.[1]?.replaceAll("&amp;", "&") as string;
    await createUser(ctx, { name: "Reader 00a", password: undefined });
    expect(listedNames(await browser.get(next))).toEqual(["Reader 50"]);
  });

  it("shows organisation admins only the people of their organisation they may manage", async () => {
    const mine = await createTestOrganisation(ctx);
    const other = await createTestOrganisation(ctx);
    const { browser } = await signedInAs(app, ctx, "organisation_admin", mine.id);
    await createUser(ctx, { name: "Colleague", organisationId: mine.id });
    await createUser(ctx, { name: "Admin Colleague", role: "admin", organisationId: mine.id });
    await createUser(ctx, { name: "Stranger", organisationId: other.id });
    await createUser(ctx, { name: "Loner" });

    const page = await browser.get("/users");
    expect(page.body).not.toContain('<option value="admin">');
    expect(page.body).not.toContain('name="organisation"');
    const names = listedNames(page);
    expect(names).toContain("Colleague");
    expect(names).not.toContain("Admin Colleague");
    expect(names).not.toContain("Stranger");
    expect(names).not.toContain("Loner");
    expect(listedNames(await browser.get(`/users?organisation=${other.id}`))).toEqual([]);
  });

  it("does not show superadmins to admins", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    await createUser(ctx, { name: "Top", role: "superadmin" });
    expect(listedNames(await browser.get("/users"))).not.toContain("Top");
  });

  it("answers 400 to filters that are not on the form", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const key = `${Buffer.from("someone").toString("base64url")}.${crypto.randomUUID()}`;
    for (const query of [
      "role=emperor",
      "status=asleep",
      "organisation=nope",
      "permission=x",
      "page=2",
      "after=abc",
      `after=${key.replace(".", "")}`,
      `after=%FF.${crypto.randomUUID()}`,
      `after=${key}&before=${key}`,
      `after=${key}&last=yes`,
      "last=no",
      "colour=red",
      "q=a&q=b",
    ]) {
      const response = await browser.get(`/users?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.headers["content-type"]).toContain("text/html");
    }
  });
  it("finds a person by their whole e-mail address in any case, and by a fragment when nobody has it", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    await createUser(ctx, { name: "Exact Person", email: "exact@whole.example" });
    await createUser(ctx, { name: "Inexact Person", email: "inexact@whole.example" });
    expect(listedNames(await browser.get("/users?q=EXACT%40Whole.example"))).toEqual(["Exact Person"]);
    expect(listedNames(await browser.get("/users?q=act%40whole.example"))).toEqual(["Exact Person", "Inexact Person"]);
    expect(listedNames(await browser.get("/users?q=exact%40whole.example&status=suspended"))).toEqual([]);
  });

  it("counts up to 10,000 people exactly, whatever the statistics expect, and says when more match, counted or estimated", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    // Last by name and not under example.org, so the tests above and the CSV tests below do not meet them.
    await ctx.db.execute(sql`
      insert into signon.users (uid, name, email, created_at, updated_at)
      select gen_random_uuid(), 'Zz Many ' || n, 'many' || n || '@many.test', now(), now() from generate_series(1, 1001) n`);
    expect(textOf(await browser.get("/users?q=many.test"))).toContain("1,001 people match.");
    await ctx.db.execute(sql`
      insert into signon.users (uid, name, email, created_at, updated_at)
      select gen_random_uuid(), 'Zz More ' || n, 'more' || n || '@more.test', now(), now() from generate_series(1, 10001) n`);
    const more = await browser.get("/users?q=more.test");
    // Either PostgreSQL's statistics already know they are many, or the count stops one past 10,000.
    expect(textOf(more)).toMatch(
      /About [\d,]+ people match \(an estimate from a sample of the list: over 10,000 people are not counted one by one\)|More than 10,000 people match \(counted one by one up to 10,000\)/,
    );
    expect(textOf(await browser.get("/users?q=many1000%40many.test"))).toContain("1 person matches.");
  });

  it("gives the rows of a first page with room to spare as the count, and an empty first page as none", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    await createUser(ctx, { name: "Qz Only", email: "qz.only@example.org" });
    expect(textOf(await browser.get("/users?q=qz"))).toContain("1 person matches.");
    const nobody = textOf(await browser.get("/users?q=%C3%B0%C3%B0"));
    expect(nobody).toContain("0 people match.");
    expect(nobody).toContain("No users match these filters.");
  });
});

describe("GET /users.csv", () => {
  it("refuses normal users", async () => {
    const { browser } = await signedInAs(app, ctx, "normal");
    const response = await browser.get("/users.csv");
    expect(response.statusCode).toBe(403);
    expect(response.body).not.toContain("name,email");
  });

  it("exports the filtered list as an attachment, with formulas neutralised", async () => {
    const organisation = await createTestOrganisation(ctx, "=Org");
    const { browser } = await signedInAs(app, ctx, "superadmin");
    await createUser(ctx, { name: "=HYPERLINK(\"http://evil.example\")", email: "evil@example.org", organisationId: organisation.id });
    await createUser(ctx, { name: "+1 Plus", email: "plus@example.org" });
    await createUser(ctx, { name: "-minus", email: "minus@example.org" });
    await createUser(ctx, { name: "@at", email: "at@example.org" });
    await createUser(ctx, { name: "Plain, with comma", email: "plain@example.org", password: undefined });

    const response = await browser.get("/users.csv?q=example.org");
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(response.headers["content-disposition"]).toBe('attachment; filename="users.csv"');
    const rows = parse(response.body) as string[][];
    expect(rows[0]).toEqual(["name", "email", "role", "organisation", "status", "last_sign_in", "created_at"]);
    const byEmail = new Map(rows.slice(1).map((row) => [row[1], row]));
    expect(byEmail.get("evil@example.org")).toEqual(["'=HYPERLINK(\"http://evil.example\")", "evil@example.org", "normal", "'=Org", "active", "", ctx.now().toISOString()]);
    expect(byEmail.get("plus@example.org")?.[0]).toBe("'+1 Plus");
    expect(byEmail.get("minus@example.org")?.[0]).toBe("'-minus");
    expect(byEmail.get("at@example.org")?.[0]).toBe("'@at");
    expect(byEmail.get("plain@example.org")?.slice(0, 5)).toEqual(["Plain, with comma", "plain@example.org", "normal", "", "invited"]);
    expect(rows).toHaveLength(7); // the header, five people and the signed-in superadmin

    const filtered = parse((await browser.get("/users.csv?status=invited")).body) as string[][];
    expect(filtered.slice(1).map((row) => row[1])).toEqual(["plain@example.org"]);
  });

  it("streams every matching person, more than one cursor batch, in the list's order", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    await ctx.db.execute(sql`
      insert into signon.users (uid, name, email, created_at, updated_at)
      select gen_random_uuid(), 'Streamed ' || n, 'streamed' || n || '@stream.test', now(), now() from generate_series(1, 2500) n`);
    const page = await browser.get("/users?q=stream.test");
    expect(textOf(page)).toContain("Download this list as CSV (2,500 rows)");
    const response = await browser.get("/users.csv?q=stream.test");
    expect(response.statusCode).toBe(200);
    const rows = parse(response.body) as string[][];
    expect(rows).toHaveLength(2501);
    const names = rows.slice(1).map((row) => row[0] as string);
    expect(names).toEqual([...names].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
    expect(new Set(rows.slice(1).map((row) => row[1])).size).toBe(2500);
  });

  it("exports only the people an organisation admin may manage", async () => {
    const mine = await createTestOrganisation(ctx);
    const { browser, email } = await signedInAs(app, ctx, "organisation_admin", mine.id);
    await createUser(ctx, { email: "colleague@example.org", organisationId: mine.id });
    await createUser(ctx, { email: "stranger@example.org" });
    const rows = parse((await browser.get("/users.csv")).body) as string[][];
    expect(rows.slice(1).map((row) => row[1]).sort()).toEqual(["colleague@example.org", email].sort());
  });
});

describe("neutraliseFormula", () => {
  it("prefixes cells a spreadsheet would run as a formula", () => {
    expect(["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "plain", "a=b", ""].map(neutraliseFormula)).toEqual([
      "'=1+1",
      "'+1",
      "'-1",
      "'@SUM(A1)",
      "'\tx",
      "'\rx",
      "plain",
      "a=b",
      "",
    ]);
  });
});
