import { eq } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { processInvitationBatches } from "../../src/accounts/invitation-batches.js";
import { invitationBatchRows, users } from "../../src/db/schema.js";
import { findUserByEmail, findUserByUid } from "../../src/repositories/users.js";
import { signedInBrowser } from "../support/browser.js";
import { createUser, defaultPassword } from "../support/factories.js";
import { buildTestSignon, openTestDatabase, testConfig } from "../support/signon.js";
import { textOf } from "./account-support.js";

// Work addresses at example.org and gov.example (and their subdomains) only, but not at personal.example.org.
const database = await openTestDatabase();
const signon = await buildTestSignon(
  database,
  testConfig({ SIGNON_EMAIL_DOMAINS_ALLOWED: "example.org,gov.example", SIGNON_EMAIL_DOMAINS_BLOCKED: "personal.example.org" }),
);
const { app, ctx } = signon;
afterAll(async () => {
  await app.close();
  await database.close();
});
beforeEach(() => database.reset());

async function admin() {
  const user = await createUser(ctx, { role: "admin" });
  return signedInBrowser(app, user.email, defaultPassword);
}

describe("the e-mail domain policy", () => {
  it("refuses invitations outside the allowed domains, on a blocked one or with non-ASCII characters, next to the field", async () => {
    const browser = await admin();
    const refusals: [string, string][] = [
      ["someone@gmail.com", "E-mail addresses at gmail.com cannot be used here; use an address at example.org, gov.example"],
      ["someone@badexample.org", "E-mail addresses at badexample.org cannot be used here; use an address at example.org, gov.example"],
      ["someone@personal.example.org", "E-mail addresses at personal.example.org cannot be used here; use a work address"],
      ["someone@home.personal.example.org", "E-mail addresses at home.personal.example.org cannot be used here; use a work address"],
      ["jöe@example.org", "Use an e-mail address made of ASCII letters, digits and punctuation only"],
      ["joe@bücher.example.org", "Use an e-mail address made of ASCII letters, digits and punctuation only"],
      ["joe@xn--bcher-kva.example.org", "Use an e-mail address made of ASCII letters, digits and punctuation only"],
    ];
    for (const [email, message] of refusals) {
      const response = await browser.submit("/users/new", "/users/new", { name: "Someone", email, role: "normal", organisation: "" });
      expect({ email, status: response.statusCode }).toEqual({ email, status: 400 });
      expect(response.body).toContain(`<p class="error-message" id="email-error">${message}</p>`);
      expect(await findUserByEmail(ctx.db, email)).toBeNull();
    }
    for (const email of ["someone@example.org", "someone@team.gov.example", "someone@EXAMPLE.ORG."]) {
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
