import type { FastifyInstance } from "fastify";
import { expect } from "vitest";
import { InjectBrowser } from "./browser.js";
import { defaultPassword } from "./factories.js";

export interface TestClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

export function authorizeUrl(params: Record<string, string>, path = "/oauth/authorize"): string {
  return `${path}?${new URLSearchParams(params).toString()}`;
}

/** Signs `email` in through the browser flow and returns the code from the redirect. */
export async function obtainCode(app: FastifyInstance, client: TestClient, email: string, extra: Record<string, string> = {}) {
  const browser = new InjectBrowser(app);
  const url = authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "st4te", ...extra });
  const signedIn = await browser.signIn(url, email, defaultPassword);
  expect(signedIn.statusCode).toBe(303);
  const authorized = await browser.get(signedIn.headers.location as string);
  expect(authorized.statusCode).toBe(302);
  const location = new URL(authorized.headers.location as string);
  return { browser, location, code: location.searchParams.get("code") as string };
}

/** POSTs a form to the token endpoint (or another path). */
export function postForm(app: FastifyInstance, url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return app.inject({
    method: "POST",
    url,
    headers: { "content-type": "application/x-www-form-urlencoded; charset=UTF-8", ...headers },
    payload: new URLSearchParams(fields).toString(),
  });
}

export function basicAuth(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString("base64")}`;
}

/** Exchanges a code with client credentials in the body. */
export function exchangeCode(app: FastifyInstance, client: TestClient, code: string, extra: Record<string, string> = {}) {
  return postForm(app, "/token", {
    grant_type: "authorization_code",
    code,
    redirect_uri: client.redirectUri,
    client_id: client.clientId,
    client_secret: client.clientSecret,
    ...extra,
  });
}

export function refresh(app: FastifyInstance, client: TestClient, refreshToken: string) {
  return postForm(app, "/token", { grant_type: "refresh_token", refresh_token: refreshToken, client_id: client.clientId, client_secret: client.clientSecret });
}

export function getUserJson(app: FastifyInstance, accessToken: string) {
  return app.inject({ method: "GET", url: "/user.json", headers: { authorization: `Bearer ${accessToken}` } });
}
