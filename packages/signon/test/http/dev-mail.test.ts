import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import signonApp, { signonServerOptions } from "../../src/app.js";
import { sendMail } from "../../src/mail/send-mail.js";
import { testConfig, useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();

describe("GET /dev/mail", () => {
  it("lists mails kept while no SMTP server is configured, newest first, escaped", async () => {
    await sendMail(signon.ctx, { to: "ada@example.org", subject: "First", text: "Hello <b>Ada</b>" });
    signon.clock.advance(1);
    await sendMail(signon.ctx, { to: "grace@example.org", subject: "Second", text: "Hi Grace" });
    const response = await signon.app.inject({ method: "GET", url: "/dev/mail" });
    expect(response.statusCode).toBe(200);
    expect(response.headers["cache-control"]).toBe("no-store");
    expect(response.body.indexOf("Second")).toBeLessThan(response.body.indexOf("First"));
    expect(response.body).toContain("Hello &lt;b&gt;Ada&lt;/b&gt;");
    expect(response.body).toContain("To ada@example.org");
  });

  it("does not exist when mail goes to an SMTP server", async () => {
    const config = testConfig({ SIGNON_SMTP_URL: "smtp://127.0.0.1:1" });
    const app = Fastify(signonServerOptions(config, false));
    await app.register(signonApp, { config, db: database.db, pool: database.pool });
    const response = await app.inject({ method: "GET", url: "/dev/mail" });
    expect(response.statusCode).toBe(404);
    await app.close();
  });
});
