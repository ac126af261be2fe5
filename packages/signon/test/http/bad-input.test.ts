import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../support/factories.js";
import { basicAuth } from "../support/flow.js";
import { buildTestSignon, openTestDatabase, type TestSignon } from "../support/signon.js";

const database = await openTestDatabase();
let signon: TestSignon;
let client: Awaited<ReturnType<typeof createApp>>;
beforeAll(async () => {
  signon = await buildTestSignon(database);
});
afterAll(async () => {
  await signon.app.close();
  await database.close();
});
beforeEach(async () => {
  await database.reset();
  client = await createApp(signon.ctx);
});

const form = "application/x-www-form-urlencoded";
const creds = () => `client_id=${client.clientId}&client_secret=${client.clientSecret}`;
const invalidRequest = (description: string) => ({ error: "invalid_request", error_description: description });
const invalidClient = (description: string) => ({ error: "invalid_client", error_description: description });

interface Case {
  name: string;
  contentType?: string;
  authorization?: string | (() => string);
  body: string | Buffer | (() => string);
  status: number;
  response: Record<string, unknown>;
}

const clientEndpointCases: Case[] = [
  { name: "no body at all", body: "", status: 400, response: invalidRequest("The body must be application/x-www-form-urlencoded") },
  { name: "a JSON body", contentType: "application/json", body: () => JSON.stringify({ client_id: client.clientId }), status: 400, response: invalidRequest("The body must be application/x-www-form-urlencoded") },
  { name: "a text/plain body", contentType: "text/plain", body: "token=x", status: 400, response: invalidRequest("Unsupported content type") },
  { name: "a multipart body", contentType: "multipart/form-data; boundary=x", body: "--x--", status: 400, response: invalidRequest("Unsupported content type") },
  { name: "a non-UTF-8 charset", contentType: `${form}; charset=ISO-8859-1`, body: "token=x", status: 400, response: invalidRequest("Form bodies must be UTF-8") },
  { name: "raw invalid UTF-8", body: Buffer.from([0x74, 0x3d, 0xff]), status: 400, response: invalidRequest("The body is not valid UTF-8") },
  { name: "percent-encoded invalid UTF-8", body: "token=%C3%28", status: 400, response: invalidRequest("The body has a malformed percent-escape or invalid UTF-8") },
  { name: "a broken percent-escape", body: "token=%ZZ", status: 400, response: invalidRequest("The body has a malformed percent-escape or invalid UTF-8") },
  { name: "a NUL in client_id", body: "token=x&client_id=a%00b&client_secret=s", status: 400, response: invalidRequest("The body contains a NUL character (U+0000)") },
  { name: "a body over 16 KiB", body: `token=${"a".repeat(17 * 1024)}`, status: 400, response: invalidRequest("The request body is too large") },
  { name: "a duplicated client_id", body: () => `token=x&${creds()}&client_id=other`, status: 400, response: invalidRequest("Invalid or repeated parameter: client_id") },
  { name: "a duplicated unknown parameter", body: () => `token=x&${creds()}&foo=1&foo=2`, status: 400, response: invalidRequest("Invalid or repeated parameter: foo") },
  { name: "an oversized client_secret", body: () => `token=x&client_id=${client.clientId}&client_secret=${"s".repeat(600)}`, status: 400, response: invalidRequest("Invalid or repeated parameter: client_secret") },
  { name: "no client credentials", body: "token=x", status: 401, response: invalidClient("Client authentication is required") },
  { name: "a Basic header that is not base64", authorization: "Basic %%%", body: "token=x", status: 401, response: invalidClient("Malformed Basic credentials") },
  { name: "a Basic header without a colon", authorization: `Basic ${Buffer.from("nocolon").toString("base64")}`, body: "token=x", status: 401, response: invalidClient("Malformed Basic credentials") },
  { name: "an empty Basic header", authorization: "Basic ", body: "token=x", status: 401, response: invalidClient("Malformed Basic credentials") },
  { name: "Basic and body credentials together", authorization: () => basicAuth(client.clientId, client.clientSecret), body: () => `token=x&${creds()}`, status: 400, response: invalidRequest("Use one client authentication method, not two") },
  { name: "an unknown authentication scheme", authorization: "Digest username=x", body: "token=x", status: 401, response: invalidClient("Unsupported client authentication method") },
];

const tokenOnlyCases: Case[] = [
  { name: "no grant_type", body: () => `code=x&${creds()}`, status: 400, response: invalidRequest("grant_type is required") },
  { name: "an unknown grant_type", body: () => `grant_type=password&${creds()}`, status: 400, response: { error: "unsupported_grant_type", error_description: "Supported grant types: authorization_code, refresh_token" } },
  { name: "client_credentials", body: () => `grant_type=client_credentials&${creds()}`, status: 400, response: { error: "unsupported_grant_type", error_description: "Supported grant types: authorization_code, refresh_token" } },
  { name: "a duplicated grant_type", body: () => `grant_type=authorization_code&grant_type=refresh_token&${creds()}`, status: 400, response: invalidRequest("Invalid or repeated parameter: grant_type") },
  { name: "authorization_code without code", body: () => `grant_type=authorization_code&${creds()}`, status: 400, response: invalidRequest("code is required") },
  { name: "an unknown code", body: () => `grant_type=authorization_code&code=nope&${creds()}`, status: 400, response: { error: "invalid_grant", error_description: "The authorization code is not valid" } },
  { name: "a duplicated code", body: () => `grant_type=authorization_code&code=a&code=b&${creds()}`, status: 400, response: invalidRequest("Invalid or repeated parameter: code") },
  { name: "an oversized code", body: () => `grant_type=authorization_code&code=${"c".repeat(600)}&${creds()}`, status: 400, response: invalidRequest("Invalid or repeated parameter: code") },
  { name: "refresh_token without refresh_token", body: () => `grant_type=refresh_token&${creds()}`, status: 400, response: invalidRequest("refresh_token is required") },
  { name: "a wrong client secret", body: () => `grant_type=refresh_token&refresh_token=x&client_id=${client.clientId}&client_secret=wrong`, status: 401, response: invalidClient("Client authentication failed") },
];

async function send(path: string, testCase: Case) {
  const body = typeof testCase.body === "function" ? testCase.body() : testCase.body;
  const authorization = typeof testCase.authorization === "function" ? testCase.authorization() : testCase.authorization;
  const headers: Record<string, string> = {};
  if (body !== "") headers["content-type"] = testCase.contentType ?? form;
  if (authorization !== undefined) headers.authorization = authorization;
  return signon.app.inject({ method: "POST", url: path, headers, ...(body === "" ? {} : { payload: body }) });
}

describe.each(["/token", "/oauth/token", "/oauth/access_token", "/oauth/revoke", "/oauth/introspect"])("POST %s with bad input", (path) => {
  const cases = path.includes("token") ? [...clientEndpointCases, ...tokenOnlyCases] : clientEndpointCases;
  it.each(cases.map((c) => [c.name, c] as const))("answers %s with the RFC error", async (_name, testCase) => {
    const response = await send(path, testCase);
    expect(response.statusCode).toBe(testCase.status);
    expect(response.json()).toEqual(testCase.response);
    expect(response.headers["cache-control"]).toBe("no-store");
  });
});

describe("POST /sign-in with bad input", () => {
  it.each([
    ["no body", undefined, undefined, 400],
    ["a JSON body", "application/json", '{"email":"a"}', 400],
    ["a complete JSON body", "application/json", '{"_csrf":"x","email":"a\\u0000b","password":"p"}', 400],
    ["a duplicated email", form, "_csrf=x&email=a&email=b&password=p", 400],
    // Over-long alone, a form comes back with its limit, but only past the CSRF check, which this post fails.
    ["an oversized password", form, `_csrf=x&email=a&password=${"p".repeat(2000)}`, 403],
    ["invalid UTF-8", form, "_csrf=x&email=%FF&password=p", 400],
    ["a NUL in the e-mail address", form, "_csrf=x&email=a%00b&password=p", 400],
    ["an unknown field", form, "_csrf=x&email=a&password=p&admin=1", 400],
    ["a body over 16 KiB", form, `_csrf=x&email=${"a".repeat(17 * 1024)}`, 400],
  ])("answers %s with an HTML error page", async (_name, contentType, payload, status) => {
    const response = await signon.app.inject({
      method: "POST",
      url: "/sign-in",
      headers: contentType ? { "content-type": contentType } : {},
      ...(payload === undefined ? {} : { payload }),
    });
    expect(response.statusCode).toBe(status);
    expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(response.body).toContain("<h1>");
  });
});

describe("GET /oauth/authorize with bad input", () => {
  it.each([
    ["invalid UTF-8 in the query", "/oauth/authorize?client_id=%FF&state=s", 400],
    ["a NUL in client_id", "/oauth/authorize?client_id=a%00b&state=s&response_type=code", 400],
    ["too many parameters", `/oauth/authorize?${Array.from({ length: 40 }, (_, i) => `p${i}=1`).join("&")}`, 400],
    ["an oversized state", () => `/oauth/authorize?response_type=code&client_id=${client.clientId}&state=${"s".repeat(3000)}`, 400],
  ])("answers %s without a redirect", async (_name, url, status) => {
    const response = await signon.app.inject({ method: "GET", url: typeof url === "function" ? url() : url });
    expect(response.statusCode).toBe(status);
    expect(response.headers.location).toBeUndefined();
  });
});

describe("unknown paths", () => {
  it.each(["/nope", "/nope/", "/applications/x/y/z"])("answer %s in JSON to an API caller", async (url) => {
    const response = await signon.app.inject({ method: "GET", url, headers: { accept: "application/json" } });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: "not_found" });
  });

  it.each(["/nope", "/nope/", "/applications/x/y/z"])("answer %s with a page to a browser", async (url) => {
    const response = await signon.app.inject({ method: "GET", url, headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" } });
    expect(response.statusCode).toBe(404);
    expect(response.headers["content-type"]).toMatch(/^text\/html/);
    expect(response.body).toContain("Page not found");
  });

  it("send a page's address with a trailing slash to the page, query kept", async () => {
    const response = await signon.app.inject({ method: "GET", url: "/users/?search=ada" });
    expect(response.statusCode).toBe(308);
    expect(response.headers.location).toBe("/users?search=ada");
  });

  it("answer a form post to nowhere in JSON", async () => {
    const response = await signon.app.inject({ method: "POST", url: "/nope", headers: { accept: "text/html" }, payload: {} });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: "not_found" });
  });
});

describe("addresses the router cannot read", () => {
  it.each([
    ["a broken percent-escape in the path", "/users/%ZZ/suspend", 400, "The address has a malformed percent-escape or invalid UTF-8"],
    ["a truncated escape in the path", "/invitations/%E0%A4%A", 400, "The address has a malformed percent-escape or invalid UTF-8"],
    ["a lone % in the path", "/applications/%", 400, "The address has a malformed percent-escape or invalid UTF-8"],
    ["a path parameter over 200 characters", `/users/${"a".repeat(250)}`, 414, "A part of the address is too long"],
  ])("answer %s with invalid_request, not Fastify's default body", async (_name, url, status, description) => {
    const response = await signon.app.inject({ method: "GET", url: `${url}?access_token=secret-in-the-query` });
    expect(response.statusCode).toBe(status);
    expect(response.json()).toEqual(invalidRequest(description));
    expect(response.headers["cache-control"]).toBe("no-store");
    expect(response.body).not.toContain("secret-in-the-query");
  });
});

describe("GET /healthcheck/live and /metrics with bad input", () => {
  it.each(["/healthcheck/live", "/healthcheck/ready", "/metrics"])("%s answers a malformed query with invalid_request, not Fastify's default body", async (path) => {
    const broken = await signon.app.inject({ method: "GET", url: `${path}?b=%ZZ` });
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toEqual(invalidRequest("The query string has a malformed percent-escape or invalid UTF-8"));
    const nul = await signon.app.inject({ method: "GET", url: `${path}?a=%00&b=%ZZ` });
    expect(nul.statusCode).toBe(400);
    expect(nul.json()).toEqual(invalidRequest("The query string contains a NUL character (U+0000)"));
  });
});
