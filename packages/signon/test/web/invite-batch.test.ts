import { eq } from "drizzle-orm";
import type { LightMyRequestResponse } from "fastify";
import { describe, expect, it } from "vitest";
import { startInvitationBatchWorker } from "../../src/accounts/invitation-batch-worker.js";
import { processInvitationBatches } from "../../src/accounts/invitation-batches.js";
import { auditEvents, invitationBatchRows, invitationPermissions } from "../../src/db/schema.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { findUserByEmail } from "../../src/repositories/users.js";
import type { InjectBrowser } from "../support/browser.js";
import { createApp, createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { mailsTo, textOf } from "./account-support.js";
import { createTestOrganisation, signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

/** Posts the batch form as a browser would, as `multipart/form-data` with `file` as the uploaded CSV file. */
async function upload(browser: InjectBrowser, file: Buffer | string, fields: Record<string, string | string[]> = {}): Promise<LightMyRequestResponse> {
  const page = await browser.get("/users/invite-batch");
  const csrf = /name="_csrf" value="([^"]*)"/.exec(page.body)?.[1] ?? "";
  const boundary = "----batch-boundary-42";
  const parts: Buffer[] = [];
  const text = (name: string, value: string) => parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  text("_csrf", csrf);
  text("role", "normal");
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) text(name, one);
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="people.csv"\r\nContent-Type: text/csv\r\n\r\n`));
  parts.push(Buffer.isBuffer(file) ? file : Buffer.from(file, "utf8"));
  parts.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return app.inject({
    method: "POST",
    url: "/users/invite-batch",
    headers: { cookie: browser.cookieHeader, "content-type": `multipart/form-data; boundary=${boundary}` },
    payload: Buffer.concat(parts),
  });
}

/** The rows of the job page's table: line, name, address, outcome and details. */
function outcomes(response: LightMyRequestResponse): string[][] {
  const body = /<tbody>([\s\S]*)<\/tbody>/.exec(response.body)?.[1] ?? "";
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] as string).matchAll(/<td>([\s\S]*?)<\/td>/g)].map((cell) => (cell[1] as string).replace(/<[^>]+>/g, "").replace(/&#39;/g, "'").replace(/&quot;/g, '"').trim()),
  );
}

describe("GET /users/invite-batch", () => {
  it("shows the upload form to administrators and refuses normal users", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const form = await browser.get("/users/invite-batch");
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('enctype="multipart/form-data"');
    expect(form.body).toContain('<input type="file" id="file" name="file"');
    const { browser: normal } = await signedInAs(app, ctx, "normal");
    expect((await normal.get("/users/invite-batch")).statusCode).toBe(403);
  });
});

describe("GET /users/invite-batch: organisation for rows that name none", () => {
  /** The organisations the form's select offers, as [value, label]. */
  function offered(body: string): string[][] {
    const select = /<select id="organisation" name="organisation"[^>]*>([\s\S]*?)<\/select>/.exec(body)?.[1] ?? "";
    return [...select.matchAll(/<option value="([^"]*)"[^>]*>([^<]*)<\/option>/g)].map((option) => [option[1] as string, option[2] as string]);
  }

  it("offers the open organisations only, as the single invitation form does, and refuses a closed one posted by hand, on its field", async () => {
    const open = await createOrganisation(ctx, { slug: "open-org", name: "Open Org" });
    const closed = await createOrganisation(ctx, { slug: "old-closed-org", name: "Old Closed Org", closed: true });
    const { browser } = await signedInAs(app, ctx, "admin");

    const form = await browser.get("/users/invite-batch");
    expect(offered(form.body)).toEqual([["", "No organisation"], [open.id, "Open Org"]]);
    const single = await browser.get("/users/new");
    expect(single.body).not.toContain(`value="${closed.id}"`);

    const refused = await upload(browser, "Ada,ada@example.org\n", { organisation: closed.id });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('id="organisation-error">Old Closed Org is closed: nobody new can join it</p>');
    expect(offered(refused.body)).toEqual([["", "No organisation"], [open.id, "Open Org"]]);
    expect(await findUserByEmail(ctx.db, "ada@example.org")).toBeNull();
  });

  it("offers a super organisation admin their own organisation and those under it only, not “No organisation”, their own chosen; left so, the batch is invited", async () => {
    const agency = await createOrganisation(ctx, { slug: "agency", name: "Agency" });
    const unit = await createOrganisation(ctx, { slug: "unit", name: "Unit", parentId: agency.id });
    await createOrganisation(ctx, { slug: "elsewhere", name: "Elsewhere" });
    await createOrganisation(ctx, { slug: "closed-unit", name: "Closed unit", parentId: agency.id, closed: true });
    const { browser } = await signedInAs(app, ctx, "super_organisation_admin", agency.id);

    const form = await browser.get("/users/invite-batch");
    expect(form.statusCode).toBe(200);
    // What /users/new offers them, too.
    expect(offered(form.body)).toEqual(offered((await browser.get("/users/new")).body));
    expect(offered(form.body)).toEqual([[agency.id, "Agency"], [unit.id, "Unit"]]);
    expect(form.body).toContain(`<option value="${agency.id}" selected>Agency</option>`);

    // The form as the browser sends it, the organisation left as it was: every row is invited, into Agency.
    const response = await upload(browser, "Name,Email,Organisation\nAda,ada@example.org,agency\nBob,bob@example.org\n", { organisation: agency.id });
    expect(response.statusCode).toBe(303);
    await processInvitationBatches(ctx);
    const page = await browser.get(response.headers.location as string);
    expect(outcomes(page).map((row) => row[3])).toEqual(["Invited", "Invited"]);
    expect(textOf(page)).toContain("Organisation of the rows that name none: Agency.");
    for (const email of ["ada@example.org", "bob@example.org"]) expect((await findUserByEmail(ctx.db, email))?.organisationId, email).toBe(agency.id);

    // "No organisation" posted by hand is still refused, on its field.
    const refused = await upload(browser, "Cy,cy@example.org\n", { organisation: "" });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('id="organisation-error">You cannot put users in that organisation</p>');
  });
});

describe("POST /users/invite-batch", () => {
  it("stores the rows, shows them waiting on a self-refreshing page, then each row's outcome once the job has run", async () => {
    const organisation = await createTestOrganisation(ctx, "Home Office");
    const { application } = await createApp(ctx, { name: "Publisher", permissions: ["editor"] });
    const taken = await createUser(ctx, { email: "taken@example.org" });
    const { browser, uid: adminUid } = await signedInAs(app, ctx, "admin");
    const csv = [
      "Name,Email,Organisation",
      "Ada Lovelace,ada@example.org",
      '"Hopper, Grace",grace@example.org,home office',
      `Taken,${taken.email}`,
      "Nobody,not-an-address",
      "Lost,lost@example.org,Ministry of Nothing",
      "Too,many,columns,here",
      "Ada Again,ADA@example.org",
      "",
    ].join("\r\n");
    const response = await upload(browser, csv, { permissions: `${application.id}:editor` });
    expect(response.statusCode).toBe(303);
    const jobUrl = response.headers.location as string;
    expect(jobUrl).toMatch(/^\/users\/invite-batch\/[0-9a-f-]{36}$/);

    const waiting = await browser.get(jobUrl);
    expect(waiting.statusCode).toBe(200);
    expect(waiting.body).toContain('<meta http-equiv="refresh" content="2">');
    expect(textOf(waiting)).toContain("In progress (this page refreshes itself): 0 invited, 0 already had an account, 2 not valid, 5 waiting, of 7.");

    expect(await processInvitationBatches(ctx)).toBe(5);
    const done = await browser.get(jobUrl);
    expect(done.body).not.toContain('http-equiv="refresh"');
    expect(textOf(done)).toContain("Finished: 2 invited, 1 already had an account, 4 not valid, of 7.");
    expect(textOf(done)).toContain("Role for everyone: Normal user. Organisation of the rows that name none: none.");
    expect(/<ul id="batch-permissions"[^>]*>([\s\S]*?)<\/ul>/.exec(done.body)?.[1]?.replace(/\s+/g, " ").trim()).toBe("<li>Publisher: editor</li>");
    expect(outcomes(done)).toEqual([
      ["2", "Ada Lovelace", "ada@example.org", "Invited", ""],
      ["3", "Hopper, Grace", "grace@example.org", "Invited", ""],
      ["4", "Taken", taken.email, "Already exists", "An account already has this e-mail address"],
      ["5", "Nobody", "not-an-address", "Not valid", 'Not an e-mail address: "not-an-address"'],
      ["6", "Lost", "lost@example.org", "Not valid", "No organisation has the slug or name “Ministry of Nothing”"],
      ["7", "Too", "many", "Not valid", "Expected Name,Email or Name,Email,Organisation; this line has 4 columns"],
      ["8", "Ada Again", "ADA@example.org", "Not valid", "The same e-mail address is on line 2"],
    ]);
    expect(await findUserByEmail(ctx.db, "grace@example.org")).toMatchObject({ name: "Hopper, Grace", role: "normal", organisationId: organisation.id, passwordHash: null });
    expect((await findUserByEmail(ctx.db, "ada@example.org"))?.organisationId).toBeNull();
    expect(await mailsTo(ctx, "grace@example.org")).toHaveLength(1);
    expect(await ctx.db.select({ permission: invitationPermissions.permission, invitedByUid: invitationPermissions.invitedByUid }).from(invitationPermissions)).toEqual([
      { permission: "editor", invitedByUid: adminUid },
      { permission: "editor", invitedByUid: adminUid },
    ]);
    const [started] = await ctx.db.select().from(auditEvents).where(eq(auditEvents.action, "invitation_batch_started"));
    expect(started).toMatchObject({ actorUid: adminUid, details: { rows: 7, role: "normal", permissions: 1 } });
    expect(await ctx.db.select().from(auditEvents).where(eq(auditEvents.action, "user_invited"))).toHaveLength(2);
  });

  it("is resumed by the batch worker: rows left pending (as by a restart) are invited once it starts", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const response = await upload(browser, "Ada,ada@example.org\nGrace,grace@example.org\n");
    expect(response.statusCode).toBe(303);
    const errors: string[] = [];
    const worker = startInvitationBatchWorker(ctx, { firstRunMs: 1, log: { error: (_details, message) => errors.push(message) } });
    try {
      await expect.poll(async () => (await ctx.db.select({ outcome: invitationBatchRows.outcome }).from(invitationBatchRows)).map((row) => row.outcome)).toEqual(["invited", "invited"]);
    } finally {
      await worker.stop();
    }
    expect(errors).toEqual([]);
  });

  it("invites each row once when two workers run at the same time", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const people = Array.from({ length: 6 }, (_, i) => `Person ${i},person${i}@example.org`);
    expect((await upload(browser, people.slice(0, 3).join("\n"))).statusCode).toBe(303);
    signon.clock.advance(1);
    expect((await upload(browser, people.slice(3).join("\n"))).statusCode).toBe(303);
    const settled = await Promise.all([processInvitationBatches(ctx), processInvitationBatches(ctx)]);
    expect(settled[0] + settled[1]).toBe(6);
    for (let i = 0; i < 6; i++) expect(await mailsTo(ctx, `person${i}@example.org`)).toHaveLength(1);
    const order = await ctx.db.select({ email: invitationBatchRows.email, processedAt: invitationBatchRows.processedAt }).from(invitationBatchRows);
    expect(order.every((row) => row.processedAt !== null)).toBe(true);
  });

  it("keeps organisation admins to their organisation and what they may grant, and shows a batch only to who may see it", async () => {
    const mine = await createTestOrganisation(ctx, "Mine");
    const other = await createTestOrganisation(ctx, "Other");
    const { application } = await createApp(ctx, { name: "Whitehall", permissions: ["editor", "admin"], delegatablePermissions: ["editor"] });
    const { browser } = await signedInAs(app, ctx, "organisation_admin", mine.id, { Whitehall: ["signin"] });
    const refused = await upload(browser, "Ada,ada@example.org", { permissions: `${application.id}:admin` });
    expect(refused.statusCode).toBe(400);
    expect(textOf(refused)).toContain("You cannot grant admin on Whitehall");

    const response = await upload(browser, `Ada,ada@example.org\nBob,bob@example.org,${other.slug}\n`, { permissions: `${application.id}:editor` });
    expect(response.statusCode).toBe(303);
    await processInvitationBatches(ctx);
    const page = await browser.get(response.headers.location as string);
    expect(outcomes(page).map((row) => [row[3], row[4]])).toEqual([
      ["Invited", ""],
      ["Not valid", "You cannot put users in that organisation"],
    ]);
    expect((await findUserByEmail(ctx.db, "ada@example.org"))?.organisationId).toBe(mine.id);

    const { browser: otherAdmin } = await signedInAs(app, ctx, "organisation_admin", mine.id);
    expect((await otherAdmin.get(response.headers.location as string)).statusCode).toBe(404);
    const { browser: admin } = await signedInAs(app, ctx, "admin");
    expect((await admin.get(response.headers.location as string)).statusCode).toBe(200);
    expect((await admin.get("/users/invite-batch/not-a-batch")).statusCode).toBe(404);
  });

  it("refuses hostile or broken files as a whole with a clear message, storing nothing", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const cases: [Buffer | string, number, string][] = [
      [Buffer.from([0x4e, 0x61, 0x6d, 0x65, 0x2c, 0xff, 0xfe, 0x0a]), 400, "The file is not UTF-8 text"],
      ["Ada,ada@example.org\u0000\n", 400, "The file contains NUL bytes"],
      ['"Ada,ada@example.org\n', 400, "The file is not valid CSV: a quoted field is never closed"],
      ['"Ada"x,ada@example.org\n', 400, "The file is not valid CSV: a quote is followed by other characters (line 1)"],
      [`${"A".repeat(5000)},a@example.org\n`, 400, "The file is not valid CSV: a line is longer than 2000 characters"],
      ["Name,Email\n\n", 400, "The file has no rows"],
      ["", 400, "Choose a CSV file, or paste the rows"],
      [Array.from({ length: 1001 }, (_, i) => `P${i},p${i}@example.org`).join("\n"), 413, "The file has 1001 rows; at most 1000"],
      [`${"a,b@example.org\n".repeat(20_000)}`, 413, "The file is larger than 256 KiB"],
    ];
    for (const [file, status, message] of cases) {
      const response = await upload(browser, file);
      expect({ status: response.statusCode, message: textOf(response).includes(message) }).toEqual({ status, message: true });
    }
    const malformedBodies: [string, string | Buffer][] = [
      ["multipart/form-data; boundary=x", "--x\r\nnot a part"],
      ["multipart/form-data", "--x\r\n\r\n--x--"],
      ["multipart/form-data; boundary=x", 'no delimiter at all'],
      ["multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="role"\r\n\r\nnor\u0000mal\r\n--x--\r\n'],
      ["multipart/form-data; boundary=x", Buffer.concat([Buffer.from('--x\r\nContent-Disposition: form-data; name="role"\r\n\r\n'), Buffer.from([0xff, 0xc0]), Buffer.from("\r\n--x--\r\n")])],
      ["multipart/form-data; boundary=x", `--x\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\n${"a".repeat(1_100_000)}\r\n--x--\r\n`],
    ];
    for (const [contentType, payload] of malformedBodies) {
      const response = await app.inject({ method: "POST", url: "/users/invite-batch", headers: { cookie: browser.cookieHeader, "content-type": contentType }, payload });
      expect(response.statusCode).toBe(400);
    }
    expect(await ctx.db.select().from(invitationBatchRows)).toEqual([]);
  });

  it("takes pasted rows from a plain form, and refuses without a valid CSRF token", async () => {
    const { browser } = await signedInAs(app, ctx, "admin");
    const pasted = await browser.submit("/users/invite-batch", "/users/invite-batch", { role: "normal", rows: "Ada,ada@example.org" });
    expect(pasted.statusCode).toBe(303);
    const forged = await browser.postForm("/users/invite-batch", { _csrf: "forged", role: "normal", rows: "Bob,bob@example.org" });
    expect(forged.statusCode).toBe(403);
    expect((await ctx.db.select().from(invitationBatchRows)).map((row) => row.email)).toEqual(["ada@example.org"]);
  });
});
