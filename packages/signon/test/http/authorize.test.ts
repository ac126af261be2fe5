import { describe, expect, it } from "vitest";
import { InjectBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { authorizeUrl } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { signon } = await useTestSignon();

const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

describe("GET /oauth/authorize", () => {
  it("also answers at /authorize", async () => {
    const client = await createApp(signon.ctx);
    const response = await signon.app.inject({
      method: "GET",
      url: authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s" }, "/authorize"),
    });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toMatch(/^\/sign-in\?return_to=%2Fauthorize%3F/);
  });

  it("uses the only registered redirect URI when the request names none", async () => {
    const client = await createApp(signon.ctx, { name: "Publisher" });
    const user = await createUser(signon.ctx, { permissions: { Publisher: ["signin"] } });
    const browser = new InjectBrowser(signon.app);
    const signedIn = await browser.signIn(authorizeUrl({ response_type: "code", client_id: client.clientId, state: "s" }), user.email, defaultPassword);
    const response = await browser.get(signedIn.headers.location as string);
    expect(response.headers.location).toMatch(new RegExp(`^${client.redirectUri}\\?code=[0-9a-f]{64}&state=s&iss=`));
  });

  describe("shows an error page (400) and never redirects", () => {
    it.each([
      ["without client_id", (c: Client) => ({ response_type: "code", redirect_uri: c.redirectUri, state: "s" }), "does not name exactly one client"],
      ["for an unknown client", (c: Client) => ({ response_type: "code", client_id: "nope", redirect_uri: c.redirectUri, state: "s" }), "The application is not known."],
      ["for a redirect URI that is not registered exactly", (c: Client) => ({ response_type: "code", client_id: c.clientId, redirect_uri: `${c.redirectUri}/`, state: "s" }), "The redirect URI is not registered"],
      ["without state (S7)", (c: Client) => ({ response_type: "code", client_id: c.clientId, redirect_uri: c.redirectUri }), "no valid state parameter"],
      ["with an empty state", (c: Client) => ({ response_type: "code", client_id: c.clientId, redirect_uri: c.redirectUri, state: "" }), "no valid state parameter"],
    ])("%s", async (_name, params, message) => {
      const client = await createApp(signon.ctx);
      const response = await signon.app.inject({ method: "GET", url: authorizeUrl(params(client)) });
      expect(response.statusCode).toBe(400);
      expect(response.headers.location).toBeUndefined();
      expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(response.body).toContain(message);
    });

    it("for a repeated client_id or redirect_uri", async () => {
      const client = await createApp(signon.ctx);
      for (const query of [
        `client_id=${client.clientId}&client_id=${client.clientId}&response_type=code&state=s`,
        `client_id=${client.clientId}&redirect_uri=${encodeURIComponent(client.redirectUri)}&redirect_uri=x&response_type=code&state=s`,
      ]) {
        const response = await signon.app.inject({ method: "GET", url: `/oauth/authorize?${query}` });
        expect(response.statusCode).toBe(400);
        expect(response.headers.location).toBeUndefined();
      }
    });
  });

  describe("redirects errors to the client with the same state (RFC 6749 §4.1.2.1)", () => {
    it.each([
      ["response_type=token", { response_type: "token" }, "unsupported_response_type"],
      ["no response_type", { response_type: undefined }, "invalid_request"],
      ["plain PKCE", { code_challenge: challenge, code_challenge_method: "plain" }, "invalid_request"],
      ["a challenge without a method", { code_challenge: challenge }, "invalid_request"],
      ["a malformed challenge", { code_challenge: "short", code_challenge_method: "S256" }, "invalid_request"],
      ["a method without a challenge", { code_challenge_method: "S256" }, "invalid_request"],
    ])("for %s", async (_name, extra, error) => {
      const client = await createApp(signon.ctx);
      const params: Record<string, string> = { response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "abc 123" };
      for (const [key, value] of Object.entries(extra)) {
        if (value === undefined) delete params[key];
        else params[key] = value;
      }
      const response = await signon.app.inject({ method: "GET", url: authorizeUrl(params) });
      expect(response.statusCode).toBe(302);
      const location = new URL(response.headers.location as string);
      expect(`${location.origin}${location.pathname}`).toBe(client.redirectUri);
      expect(location.searchParams.get("error")).toBe(error);
      expect(location.searchParams.get("state")).toBe("abc 123");
      expect(location.searchParams.get("code")).toBeNull();
    });

    it("when the application requires PKCE and the request has none", async () => {
      const client = await createApp(signon.ctx, { requirePkce: true });
      const response = await signon.app.inject({
        method: "GET",
        url: authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s" }),
      });
      const location = new URL(response.headers.location as string);
      expect(Object.fromEntries(location.searchParams)).toEqual({
        error: "invalid_request",
        error_description: "This application requires PKCE (code_challenge)",
        state: "s",
        iss: "http://localhost:3000",
      });
    });
  });
});

type Client = Awaited<ReturnType<typeof createApp>>;
