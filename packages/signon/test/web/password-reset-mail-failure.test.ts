import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { InjectBrowser } from "../support/browser.js";
import { createUser } from "../support/factories.js";
import { buildTestSignon, openTestDatabase, testConfig } from "../support/signon.js";

// A mail server that refuses connections: nothing listens on port 1.
const database = await openTestDatabase();
const signon = await buildTestSignon(database, testConfig({ SIGNON_SMTP_URL: "smtp://127.0.0.1:1" }));
afterAll(async () => {
  await signon.app.close();
  await database.close();
});
beforeEach(() => database.reset());

describe("POST /password-reset when the mail cannot be sent", () => {
  it("answers exactly as for an address without an account, so the failure does not tell that the account exists", async () => {
    const person = await createUser(signon.ctx);
    const known = await new InjectBrowser(signon.app).submit("/password-reset", "/password-reset", { email: person.email });
    const unknown = await new InjectBrowser(signon.app).submit("/password-reset", "/password-reset", { email: "nobody@example.org" });
    expect(known.statusCode).toBe(303);
    expect({ status: unknown.statusCode, location: unknown.headers.location, body: unknown.body }).toEqual({ status: known.statusCode, location: known.headers.location, body: known.body });
  });
});
