import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { InjectBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { basicAuth, exchangeCode, getUserJson, obtainCode, postForm, refresh } from "../support/flow.js";
import { buildTestSignon, openTestDatabase, testConfig } from "../support/signon.js";

/** Every line Sign-on logs, kept in memory. */
const lines: string[] = [];
const logText = () => lines.join("");

const database = await openTestDatabase();
const { app, ctx } = await buildTestSignon(database, testConfig(), { level: "debug", stream: { write: (line: string) => void lines.push(line) } });
afterAll(async () => {
  await app.close();
  await database.close();
});
beforeEach(() => database.reset());

describe("Sign-on logs", () => {
  it("never contain the password, client secret, code, tokens or cookies of an OAuth flow", async () => {
    const client = await createApp(ctx, { name: "Publisher", permissions: ["admin"] });
    const user = await createUser(ctx, { permissions: { Publisher: ["signin"] } });
    lines.length = 0;

    const { browser, code } = await obtainCode(app, client, user.email);
    const sessionCookies = browser.cookieHeader.split("; ").map((pair) => pair.slice(pair.indexOf("=") + 1));
    const exchanged = await exchangeCode(app, client, code);
    expect(exchanged.statusCode).toBe(200);
    const { access_token: accessToken, refresh_token: refreshToken } = exchanged.json<{ access_token: string; refresh_token: string }>();
    expect((await getUserJson(app, accessToken)).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: `/user.json?access_token=${accessToken}` })).statusCode).toBe(200);
    const refreshed = await refresh(app, client, refreshToken);
    expect(refreshed.statusCode).toBe(200);
    const newTokens = refreshed.json<{ access_token: string; refresh_token: string }>();
    // Failures log too: a replayed code, a wrong secret in Basic credentials, a wrong password.
    expect((await exchangeCode(app, client, code)).statusCode).toBe(400);
    const wrongSecret = `${client.clientSecret.slice(0, -4)}XXXX`;
    const refused = await postForm(app, "/token", { grant_type: "refresh_token", refresh_token: newTokens.refresh_token }, { authorization: basicAuth(client.clientId, wrongSecret) });
    expect(refused.statusCode).toBe(401);
    const stranger = await new InjectBrowser(app).signIn("/sign-in", user.email, "wrong password value");
    expect(stranger.statusCode).toBe(401);

    const secrets = {
      password: defaultPassword,
      "wrong password": "wrong password value",
      "client secret": client.clientSecret,
      "wrong client secret": wrongSecret,
      code,
      "access token": accessToken,
      "refresh token": refreshToken,
      "refreshed access token": newTokens.access_token,
      "refreshed refresh token": newTokens.refresh_token,
      ...Object.fromEntries(sessionCookies.map((value, index) => [`cookie ${index}`, value])),
    };
    expect(lines.length).toBeGreaterThan(20);
    const text = logText();
    for (const [name, value] of Object.entries(secrets)) {
      expect(value.length, name).toBeGreaterThan(8);
      expect(text.includes(value), `the ${name} is in the log`).toBe(false);
      // Also not URL-encoded (a form body or query string written out).
      expect(text.includes(encodeURIComponent(value)), `the encoded ${name} is in the log`).toBe(false);
    }
  });

  it("carry the request id on every line of a request, and send it back", async () => {
    lines.length = 0;
    const response = await app.inject({ method: "GET", url: "/user.json", headers: { authorization: "Bearer not-a-token-at-all", "x-request-id": "lb-7f3a.1" } });
    expect(response.statusCode).toBe(401);
    expect(response.headers["x-request-id"]).toBe("lb-7f3a.1");
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries.map((entry) => entry["msg"])).toEqual(expect.arrayContaining(["incoming request", "request completed"]));
    for (const entry of entries) expect(entry["request_id"]).toBe("lb-7f3a.1");
    expect(logText()).not.toContain("not-a-token-at-all");
  });

  it("log the request path without its query string", async () => {
    lines.length = 0;
    await app.inject({ method: "GET", url: "/user.json?access_token=query-token-value-123" });
    const incoming = lines.map((line) => JSON.parse(line) as { msg: string; req?: unknown }).find((entry) => entry.msg === "incoming request");
    expect(incoming?.req).toEqual({ method: "GET", path: "/user.json", ip: "127.0.0.1" });
    expect(logText()).not.toContain("query-token-value-123");
  });
});
