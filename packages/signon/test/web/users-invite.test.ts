import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { auditEvents, devMails } from "../../src/db/schema.js";
import { findUserByEmail } from "../../src/repositories/users.js";
import { createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";
import { createTestOrganisation, signedInAs } from "./users-support.js";

const { database, signon } = await useTestSignon();
const { app, ctx } = signon;

describe("GET /users/new", () => {
  it("offers the roles the actor may give", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const response = await browser.get("/users/new");
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('<label for="email">E-mail address</label>');
    expect(response.body).toContain('value="organisation_admin"');
    expect(response.body).not.toContain('value="superadmin"');
    expect(response.body).toContain('name="organisation"');
  });

  it("refuses normal users", async () => {
    const { browser } = await signedInAs(app, ctx, "normal");
    expect((await browser.get("/users/new")).statusCode).toBe(403);
  });
});

describe("POST /users/new", () => {
  it("creates the account without a password and mails the invitation", async () => {
    const organisation = await createTestOrganisation(ctx);
    const { browser, uid: actorUid } = await signedInAs(app, ctx, "admin");
    const response = await browser.submit("/users/new", "/users/new", {
      name: "Grace Hopper",
      email: "grace@example.org",
      role: "organisation_admin",
      organisation: organisation.id,
    });
    expect(response.statusCode).toBe(303);
    const invited = await findUserByEmail(ctx.db, "grace@example.org");
    expect(invited).toMatchObject({ name: "Grace Hopper", role: "organisation_admin", organisationId: organisation.id, passwordHash: null });
    expect(response.headers.location).toBe(`/users/${invited?.uid}`);
    const page = textOf(await browser.get(`/users/${invited?.uid}`));
    expect(page).toContain("Invitation sent to grace@example.org.");
    expect(page).toContain("Status invited");

    const mails = await ctx.db.select().from(devMails).where(eq(devMails.recipient, "grace@example.org"));
    expect(mails).toHaveLength(1);
    expect(mails[0]?.textBody).toMatch(/\/invitations\/[A-Za-z0-9_-]+/);
    const events = await ctx.db.select().from(auditEvents).where(eq(auditEvents.action, "user_invited"));
    expect(events).toMatchObject([{ actorUid, subjectUid: invited?.uid }]);
  });

  it("answers 400 with messages next to the fields, creating nobody", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const response = await browser.submit("/users/new", "/users/new", { name: "", email: "nope", role: "superadmin", organisation: "" });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('<a href="#name">Enter a name</a>');
    expect(response.body).toContain('<a href="#email">Enter an e-mail address like name@example.org</a>');
    expect(response.body).toContain('<a href="#role">Choose one of the roles listed</a>');
    expect(await findUserByEmail(ctx.db, "nope")).toBeNull();

    const taken = await createUser(ctx);
    const duplicate = await browser.submit("/users/new", "/users/new", { name: "Copy", email: taken.email, role: "normal", organisation: "" });
    expect(duplicate.statusCode).toBe(400);
    expect(textOf(duplicate)).toContain("already exists");
    expect(await ctx.db.select().from(devMails)).toEqual([]);

    const malformed = await browser.submit("/users/new", "/users/new", { name: "X", email: "x@example.org", role: "normal", extra: "field" });
    expect(malformed.statusCode).toBe(400);
  });

  it("answers the same invitation sent twice at once with one account and, to the other, the form saying it exists; never a 500", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const invite = () => browser.submit("/users/new", "/users/new", { name: "Twice", email: "twice@example.org", role: "normal", organisation: "" });
    // Another transaction holds the address, uncommitted: both requests find it free, then wait on the unique index.
    const holder = await database.pool.connect();
    try {
      await holder.query("begin");
      await holder.query("insert into signon.users (uid, name, email, created_at, updated_at) values (gen_random_uuid(), 'Holder', 'twice@example.org', now(), now())");
      const answers = Promise.all([invite(), invite()]);
      await vi.waitFor(async () => {
        const { rows } = await database.pool.query<{ waiting: number }>(
          "select count(*)::int as waiting from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
        );
        expect(rows[0]?.waiting).toBe(2);
      }, { timeout: 10_000 });
      // The holder gives up: one request's insert goes through, and the other's then meets it.
      await holder.query("rollback");
      const statuses = (await answers).map((response) => response.statusCode).sort();
      expect(statuses).toEqual([303, 400]);
      const refused = (await answers).find((response) => response.statusCode === 400);
      expect(textOf(refused!)).toContain("A user with e-mail twice@example.org already exists");
      const { rows } = await database.pool.query("select uid from signon.users where email = 'twice@example.org'");
      expect(rows).toHaveLength(1);
      expect(await ctx.db.select().from(devMails).where(eq(devMails.recipient, "twice@example.org"))).toHaveLength(1);
    } finally {
      await holder.query("rollback").catch(() => undefined);
      holder.release();
    }
  });

  it("puts people invited by an organisation admin in the admin's organisation", async () => {
    const mine = await createTestOrganisation(ctx);
    const other = await createTestOrganisation(ctx);
    const { browser } = await signedInAs(app, ctx, "organisation_admin", mine.id);
    const form = await browser.get("/users/new");
    expect(form.body).not.toContain('name="organisation"');
    expect(form.body).not.toContain('value="admin"');

    const response = await browser.submit("/users/new", "/users/new", { name: "Colleague", email: "colleague@example.org", role: "normal" });
    expect(response.statusCode).toBe(303);
    expect((await findUserByEmail(ctx.db, "colleague@example.org"))?.organisationId).toBe(mine.id);

    const elsewhere = await browser.submit("/users/new", "/users/new", { name: "X", email: "x@example.org", role: "normal", organisation: other.id });
    expect(elsewhere.statusCode).toBe(400);
    const promoted = await browser.submit("/users/new", "/users/new", { name: "Y", email: "y@example.org", role: "admin" });
    expect(promoted.statusCode).toBe(400);
    expect(await findUserByEmail(ctx.db, "x@example.org")).toBeNull();
    expect(await findUserByEmail(ctx.db, "y@example.org")).toBeNull();
  });

  it("refuses normal users and forged CSRF tokens", async () => {
    const { browser } = await signedInAs(app, ctx, "normal");
    const response = await browser.submit("/", "/users/new", { name: "X", email: "x@example.org", role: "normal" });
    expect(response.statusCode).toBe(403);
    const { browser: admin } = await signedInAs(app, ctx, "admin");
    await admin.get("/users/new");
    const forged = await admin.postForm("/users/new", { _csrf: "forged", name: "Y", email: "y@example.org", role: "normal" });
    expect(forged.statusCode).toBe(403);
    expect(await findUserByEmail(ctx.db, "x@example.org")).toBeNull();
    expect(await findUserByEmail(ctx.db, "y@example.org")).toBeNull();
  });
});
