import type { FastifyInstance } from "fastify";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ConfigError, configFromEnv } from "../src/config.js";
import { editorialTestDatabase, freePort, listenEditorialApp } from "./support/editorial-app.js";

// Development without Sign-on: nothing listens at SIGNON_URL, and every request is the stand-in's.
const database = await editorialTestDatabase();
afterAll(() => database.close());

const standIn = JSON.stringify({ uid: "dev-1", name: "Dev Eloper", email: "dev@example.org", permissions: ["admin"], organisation_slug: "cabinet-office" });

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe("EDITORIAL_APP_SIGNON_MOCK_USER", () => {
  it("runs the application without Sign-on: the pages and the API are the stand-in's", async () => {
    await database.reset();
    const port = await freePort();
    const config = configFromEnv({ EDITORIAL_APP_SIGNON_MOCK_USER: standIn, PORT: String(port), SIGNON_URL: `http://127.0.0.1:${await freePort()}` });
    let url: string;
    ({ app, url } = await listenEditorialApp({ ...config, database: { url: database.url } }, port));

    const home = await fetch(`${url}/`, { redirect: "manual" });
    expect(home.status).toBe(200);
    const page = await home.text();
    expect(page).toContain('<dd id="name">Dev Eloper</dd>');
    expect(page).toContain('<dd id="organisation">cabinet-office</dd>');
    expect(page).toContain("<li><code>admin</code></li><li><code>signin</code></li>");
    expect((await fetch(`${url}/admin`, { redirect: "manual" })).status).toBe(200);

    const me = await fetch(`${url}/api/me`);
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({
      user: { uid: "dev-1", name: "Dev Eloper", email: "dev@example.org", permissions: ["admin", "signin"], organisation_slug: "cabinet-office", organisation_content_id: null },
    });
    const signIn = await fetch(`${url}/auth/gds?return_to=/admin`, { redirect: "manual" });
    expect([signIn.status, signIn.headers.get("location")]).toEqual([302, "/admin"]);
  });

  it("is read as the stand-in, and the client id and secret are no longer required", () => {
    expect(configFromEnv({ EDITORIAL_APP_SIGNON_MOCK_USER: standIn })).toMatchObject({
      clientId: "signon-mock",
      clientSecret: "signon-mock",
      mockUser: { uid: "dev-1", name: "Dev Eloper", email: "dev@example.org", permissions: ["admin"], organisationSlug: "cabinet-office", organisationContentId: null },
      nodeEnv: "development",
    });
    expect(configFromEnv({ EDITORIAL_APP_SIGNON_MOCK_USER: standIn, EDITORIAL_APP_CLIENT_ID: "id", NODE_ENV: "test" })).toMatchObject({ clientId: "id", nodeEnv: "test" });
    expect(configFromEnv({ EDITORIAL_APP_SIGNON_MOCK_USER: "", EDITORIAL_APP_CLIENT_ID: "id", EDITORIAL_APP_CLIENT_SECRET: "s" })).not.toHaveProperty("mockUser");
  });

  it("is refused when NODE_ENV is production, naming the variable", () => {
    const read = () => configFromEnv({ EDITORIAL_APP_SIGNON_MOCK_USER: standIn, NODE_ENV: "production", EDITORIAL_APP_CLIENT_ID: "id", EDITORIAL_APP_CLIENT_SECRET: "s" });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow("EDITORIAL_APP_SIGNON_MOCK_USER must not be set when NODE_ENV is production: it signs every request in without Sign-on");
  });

  it.each([
    ["not JSON", /^EDITORIAL_APP_SIGNON_MOCK_USER must be a JSON object such as/],
    [JSON.stringify({ name: "A", email: "a@example.org" }), /^EDITORIAL_APP_SIGNON_MOCK_USER needs "uid"/],
    [JSON.stringify(["dev-1"]), /^EDITORIAL_APP_SIGNON_MOCK_USER needs "uid"/],
    [JSON.stringify({ uid: "u", name: "A", email: "a@example.org", permissions: "admin" }), /"permissions" must be a list of permission names/],
  ])("refuses %s with a message naming the variable", (value, message) => {
    expect(() => configFromEnv({ EDITORIAL_APP_SIGNON_MOCK_USER: value })).toThrow(message);
  });
});
