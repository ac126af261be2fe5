import { eq } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { processInvitationBatches } from "../../src/accounts/invitation-batches.js";
import type { SignonContext } from "../../src/context.js";
import { invitationBatchRows, users } from "../../src/db/schema.js";
import { findUserByEmail, findUserByUid } from "../../src/repositories/users.js";
import { InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createUser, defaultPassword } from "../support/factories.js";
import { buildTestSignon, openTestDatabase, testConfig } from "../support/signon.js";
import { linkMailedTo, strongPassword, textOf } from "./account-support.js";

// Work addresses at example.org and gov.example (and their subdomains) only, but not at personal.example.org.
const database = await openTestDatabase();
const signon = await buildTestSignon(
  database,
  testConfig({ SIGNON_EMAIL_DOMAINS_ALLOWED: "example.org,gov.example", SIGNON_EMAIL_DOMAINS_BLOCKED: "personal.example.org" }),
);
const { app, ctx } = signon;
// As installed: SIGNON_EMAIL_DOMAINS_BLOCKED unset, so the built-in consumer mail services are refused; and set empty.
const defaults = await buildTestSignon(database, testConfig());
const unblocked = await buildTestSignon(database, testConfig({ SIGNON_EMAIL_DOMAINS_BLOCKED: "" }));
afterAll(async () => {
  await Promise.all([app.close(), defaults.app.close(), unblocked.app.close()]);
  await database.close();
});
beforeEach(() => database.reset());

async function admin(on: { app: FastifyInstance; ctx: SignonContext } = signon) {
  const user = await createUser(on.ctx, { role: "admin" });
  return signedInBrowser(on.app, user.email, defaultPassword);
}

const personal = (domain: string) => `Addresses at ${domain}, a personal e-mail service, cannot be used here: use a work e-mail address`;

describe("the e-mail domain policy", () => {
  it("refuses invitations outside the allowed domains, on a blocked one or with non-ASCII characters, next to the field; accepts an xn-- domain", async () => {
    const browser = await admin();
    const refusals: [string, string][] = [
      ["someone@gmail.com", "E-mail addresses at gmail.com cannot be used here; use an address at example.org, gov.example"],
      ["someone@badexample.org", "E-mail addresses at badexample.org cannot be used here; use an address at example.org, gov.example"],
      ["someone@personal.example.org", "E-mail addresses at personal.example.org cannot be used here; use a work address"],
      ["someone@home.personal.example.org", "E-mail addresses at home.personal.example.org cannot be used here; use a work address"],
      ["jöe@example.org", "Use an e-mail address made of ASCII letters, digits and punctuation only"],
      ["joe@bücher.example.org", "Use an e-mail address made of ASCII letters, digits and punctuation only; the domain can be written xn--bcher-kva.example.org"],
    ];
    for (const [email, message] of refusals) {
      const response = await browser.submit("/users/new", "/users/new", { name: "Someone", email, role: "normal", organisation: "" });
      expect({ email, status: response.statusCode }).toEqual({ email, status: 400 });
      expect(response.body).toContain(`<p class="error-message" id="email-error">${message}</p>`);
      expect(await findUserByEmail(ctx.db, email)).toBeNull();
    }
    // An internationalised domain in its ASCII (xn--) form is plain ASCII: accepted.
    for (const email of ["someone@example.org", "someone@team.gov.example", "someone@EXAMPLE.ORG.", "joe@xn--bcher-kva.example.org"]) {
      const response = await browser.submit("/users/new", "/users/new", { name: "Someone", email, role: "normal", organisation: "" });
      expect({ email, status: response.statusCode }).toEqual({ email, status: 303 });
    }
  });

  it("marks refused addresses of a batch as not valid, with the reason", async () => {
    const browser = await admin();
    const response = await browser.submit("/users/invite-batch", "/users/invite-batch", { role: "normal", rows: "Ada,ada@example.org\nBob,bob@gmail.com\n" });
    expect(response.statusCode).toBe(303);
    await processInvitationBatches(ctx);
    const rows = await ctx.db.select({ email: invitationBatchRows.email, outcome: invitationBatchRows.outcome, reason: invitationBatchRows.reason }).from(invitationBatchRows);
    expect(rows).toEqual([
      { email: "ada@example.org", outcome: "invited", reason: null },
      { email: "bob@gmail.com", outcome: "invalid", reason: "E-mail addresses at gmail.com cannot be used here; use an address at example.org, gov.example" },
    ]);
  });

  it("refuses a change of one's own address, or an administrator's change of someone's, to a refused domain", async () => {
    const person = await createUser(ctx);
    const browser = await signedInBrowser(app, person.email, defaultPassword);
    const own = await browser.submit("/account", "/account/email", { email: "me@gmail.com", current: defaultPassword });
    expect(own.statusCode).toBe(400);
    expect(textOf(own)).toContain("E-mail addresses at gmail.com cannot be used here");

    const byAdmin = await (await admin()).submit(`/users/${person.uid}`, `/users/${person.uid}`, {
      name: person.name,
      email: "them@personal.example.org",
      role: person.role,
      organisation: "",
      email_confirmed_out_of_band: "yes",
    });
    expect(byAdmin.statusCode).toBe(400);
    expect(textOf(byAdmin)).toContain("E-mail addresses at personal.example.org cannot be used here; use a work address");
    expect((await findUserByUid(ctx.db, person.uid))?.email).toBe(person.email);
  });

  it("leaves existing addresses alone: a user whose domain is now refused can still be edited", async () => {
    const person = await createUser(ctx);
    // Written directly: the address predates the policy.
    await ctx.db.update(users).set({ email: "old@gmail.com" }).where(eq(users.uid, person.uid));
    const response = await (await admin()).submit(`/users/${person.uid}`, `/users/${person.uid}`, { name: "New Name", email: "old@gmail.com", role: person.role, organisation: "" });
    expect(response.statusCode).toBe(303);
    expect((await findUserByUid(ctx.db, person.uid))?.name).toBe("New Name");
  });
});

describe("the built-in list of consumer mail services (SIGNON_EMAIL_DOMAINS_BLOCKED unset)", () => {
  it("refuses an invitation at gmail.com and the like next to the field, saying it must be a work address and naming the domain", async () => {
    const browser = await admin(defaults);
    for (const domain of ["gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "hotmail.co.uk", "live.com", "yahoo.co.uk", "icloud.com", "me.com", "aol.com", "proton.me", "gmx.de", "eu.mail.com"]) {
      const email = `someone@${domain}`;
      const response = await browser.submit("/users/new", "/users/new", { name: "Someone", email, role: "normal", organisation: "" });
      expect({ email, status: response.statusCode }).toEqual({ email, status: 400 });
      expect(response.body).toContain(`<p class="error-message" id="email-error">${personal(domain)}</p>`);
      expect(await findUserByEmail(defaults.ctx.db, email)).toBeNull();
    }
    for (const email of ["someone@example.org", "someone@notgmail.com", "someone@gmail.com.example.org"]) {
      const response = await browser.submit("/users/new", "/users/new", { name: "Someone", email, role: "normal", organisation: "" });
      expect({ email, status: response.statusCode }).toEqual({ email, status: 303 });
    }
  });

  it("marks the rows of a batch at such a service as not valid, with the reason", async () => {
    const browser = await admin(defaults);
    const response = await browser.submit("/users/invite-batch", "/users/invite-batch", { role: "normal", rows: "Ada,ada@example.org\nBob,bob@Outlook.com\n" });
    expect(response.statusCode).toBe(303);
    await processInvitationBatches(defaults.ctx);
    const rows = await defaults.ctx.db.select({ email: invitationBatchRows.email, outcome: invitationBatchRows.outcome, reason: invitationBatchRows.reason }).from(invitationBatchRows);
    expect(rows).toEqual([
      { email: "ada@example.org", outcome: "invited", reason: null },
      { email: "bob@Outlook.com", outcome: "invalid", reason: personal("outlook.com") },
    ]);
  });

  it("refuses a change of one's own address, or an administrator's change of someone's, to such a service", async () => {
    const person = await createUser(defaults.ctx);
    const own = await (await signedInBrowser(defaults.app, person.email, defaultPassword)).submit("/account", "/account/email", { email: "me@yahoo.com", current: defaultPassword });
    expect(own.statusCode).toBe(400);
    expect(textOf(own)).toContain(personal("yahoo.com"));
    const byAdmin = await (await admin(defaults)).submit(`/users/${person.uid}`, `/users/${person.uid}`, {
      name: person.name,
      email: "them@icloud.com",
      role: person.role,
      organisation: "",
      email_confirmed_out_of_band: "yes",
    });
    expect(byAdmin.statusCode).toBe(400);
    expect(textOf(byAdmin)).toContain(personal("icloud.com"));
    expect((await findUserByUid(defaults.ctx.db, person.uid))?.email).toBe(person.email);
  });

  it("leaves accounts that already have such an address working: sign-in, password reset and edits", async () => {
    const person = await createUser(defaults.ctx);
    // Written directly: the address predates the policy.
    await defaults.ctx.db.update(users).set({ email: "old@gmail.com" }).where(eq(users.uid, person.uid));
    await signedInBrowser(defaults.app, "old@gmail.com", defaultPassword);
    expect((await new InjectBrowser(defaults.app).submit("/password-reset", "/password-reset", { email: "old@gmail.com" })).statusCode).toBe(303);
    const link = await linkMailedTo(defaults.ctx, "old@gmail.com", "/password-reset/");
    const password = strongPassword();
    expect((await new InjectBrowser(defaults.app).submit(link, link, { password, confirmation: password })).statusCode).toBe(303);
    await signedInBrowser(defaults.app, "old@gmail.com", password);
    const edit = await (await admin(defaults)).submit(`/users/${person.uid}`, `/users/${person.uid}`, { name: "New Name", email: "old@gmail.com", role: person.role, organisation: "" });
    expect(edit.statusCode).toBe(303);
    expect((await findUserByUid(defaults.ctx.db, person.uid))?.name).toBe("New Name");
  });

  it("refuses none of them when SIGNON_EMAIL_DOMAINS_BLOCKED is set empty", async () => {
    const response = await (await admin(unblocked)).submit("/users/new", "/users/new", { name: "Someone", email: "someone@gmail.com", role: "normal", organisation: "" });
    expect(response.statusCode).toBe(303);
    expect(await findUserByEmail(unblocked.ctx.db, "someone@gmail.com")).not.toBeNull();
  });
});
