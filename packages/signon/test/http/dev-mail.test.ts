import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import signonApp, { signonServerOptions } from "../../src/app.js";
import { sendMail } from "../../src/mail/send-mail.js";
import { signedInBrowser } from "../support/browser.js";
import { createUser, defaultPassword } from "../support/factories.js";
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

  it("makes the web addresses in a mail links, and escapes everything else", async () => {
    await sendMail(signon.ctx, {
      to: "ada@example.org",
      subject: "Links",
      text: 'Reset: http://127.0.0.1:3000/password-reset/abc?x=1&y=2.\nNot this: javascript:alert(1) nor <https://x.example/"onmouseover="alert(1)>',
    });
    const response = await signon.app.inject({ method: "GET", url: "/dev/mail" });
    expect(response.body).toContain('<a href="http://127.0.0.1:3000/password-reset/abc?x=1&amp;y=2">http://127.0.0.1:3000/password-reset/abc?x=1&amp;y=2</a>.');
    expect(response.body).toContain('<a href="https://x.example/">https://x.example/</a>&quot;onmouseover=&quot;alert(1)&gt;');
    expect(response.body).not.toContain('href="javascript');
  });

  it("shows the site navigation to a signed-in person, and none to anyone else", async () => {
    const user = await createUser(signon.ctx, { role: "superadmin" });
    const browser = await signedInBrowser(signon.app, user.email, defaultPassword);
    expect((await browser.get("/dev/mail")).body).toContain('<a href="/users">Users</a>');
    const anonymous = await signon.app.inject({ method: "GET", url: "/dev/mail" });
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.body).not.toContain('<a href="/users">Users</a>');
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
