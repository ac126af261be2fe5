import { readFile } from "node:fs/promises";
import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock, StandInSignon } from "../src/testing/index.js";
import { Browser } from "./support/browser.js";
import { buildApp } from "./readme-example.js";

const client = {
  clientId: "editorial",
  clientSecret: "s3cret",
  redirectUri: "https://editorial.example.org/auth/gds/callback",
};

let signon: StandInSignon;
let app: FastifyInstance;
beforeEach(async () => {
  signon = new StandInSignon({ client, clock: new ManualClock() });
  await signon.listen();
  app = await buildApp(signon.url, client.clientSecret);
});
afterEach(async () => {
  await app.close();
  await signon.close();
});

describe("README", () => {
  it("shows test/readme-example.ts verbatim", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const example = await readFile(new URL("./readme-example.ts", import.meta.url), "utf8");

    expect(readme).toContain(`\`\`\`ts\n${example}\`\`\``);
  });

  it("is the quick start of the repository README too", async () => {
    const readme = await readFile(new URL("../../../README.md", import.meta.url), "utf8");
    const example = await readFile(new URL("./readme-example.ts", import.meta.url), "utf8");

    expect(readme).toContain(`\`\`\`ts\n${example}\`\`\``);
  });

  it("example signs a user in and guards the admin page", async () => {
    const user = signon.addUser({ uid: "u-1", name: "Ada", email: "ada@example.org", permissions: ["signin"] });
    const browser = new Browser(app);

    await browser.signIn(signon, user.uid);

    expect((await browser.get("/")).body).toBe("Hello, Ada");
    expect((await browser.get("/admin")).statusCode).toBe(403);
    expect(browser.cookies.size).toBe(1);
  });
});
