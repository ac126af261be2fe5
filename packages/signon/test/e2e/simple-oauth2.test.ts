import { AuthorizationCode } from "simple-oauth2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { HttpBrowser } from "../support/http-browser.js";
import { startShippedSignon } from "../support/listening.js";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
let server: Awaited<ReturnType<typeof startShippedSignon>>;

beforeAll(async () => {
  server = await startShippedSignon(database);
});
afterAll(async () => {
  await server.close();
  await database.close();
});

describe("simple-oauth2 (credentials in the body, draft-era style) against a listening Sign-on", () => {
  it("signs in, gets tokens from /oauth/token, reads /user.json?access_token= and refreshes", async () => {
    const client = await createApp(server.ctx, { name: "Draft client", redirectUris: ["http://127.0.0.1:9/auth/gds/callback"], permissions: ["admin"] });
    const user = await createUser(server.ctx, { name: "Draft User", permissions: { "Draft client": ["signin", "admin"] } });
    const oauth = new AuthorizationCode({
      client: { id: client.clientId, secret: client.clientSecret },
      auth: { tokenHost: server.issuer, tokenPath: "/oauth/token", authorizePath: "/oauth/authorize" },
      options: { authorizationMethod: "body" },
    });

    const authorizationUrl = oauth.authorizeURL({ redirect_uri: client.redirectUri, state: "draft-state" });
    const callback = await new HttpBrowser(server.issuer).authorize(authorizationUrl, user.email, defaultPassword);
    expect(callback.searchParams.get("state")).toBe("draft-state");

    const accessToken = await oauth.getToken({ code: callback.searchParams.get("code") as string, redirect_uri: client.redirectUri });
    expect(accessToken.token).toMatchObject({ token_type: "Bearer", expires_in: 7200 });

    const response = await fetch(`${server.issuer}/user.json?access_token=${String(accessToken.token.access_token)}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      user: {
        uid: user.uid,
        name: "Draft User",
        email: user.email,
        permissions: ["admin", "signin"],
        organisation_slug: null,
        organisation_content_id: null,
        disabled: false,
      },
    });

    const refreshed = await accessToken.refresh();
    expect(refreshed.token.access_token).not.toBe(accessToken.token.access_token);
    expect((await fetch(`${server.issuer}/user.json?access_token=${String(refreshed.token.access_token)}`)).status).toBe(200);
  });
});
