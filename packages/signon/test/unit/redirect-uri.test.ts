import { describe, expect, it } from "vitest";
import { isRegisteredRedirectUri, redirectUriBinds, redirectUriProblem, withoutAuthorizationResponseParameters } from "../../src/oauth/redirect-uri.js";

describe("redirectUriProblem", () => {
  it.each([
    ["https://app.example/auth/callback", true, null],
    ["https://app.example/auth/callback", false, null],
    ["http://127.0.0.1:4000/cb", true, null],
    ["http://localhost/cb", true, null],
    ["http://[::1]:8080/cb", true, null],
    ["http://127.0.0.1:4000/cb", false, "must use https (http on a loopback host is allowed in development only)"],
    ["http://app.example/cb", true, "must use https"],
    ["javascript:alert(1)", true, "must use https"],
    ["/relative/path", true, "is not an absolute URI"],
    ["https://app.example/cb#frag", true, "must not contain a fragment"],
    ["https://user:pw@app.example/cb", true, "must not contain credentials"],
    ["https://*.example.org/cb", true, "must name its host: wildcards are not supported, each redirect URI is matched exactly"],
    ["https://app.example/cb/*", true, null],
    ["https://app.example/cb?tenant=1", true, null],
    ["https://app.example/cb?state=1", true, "must not carry the query parameters code, state or iss, which the authorization response adds"],
    ["https://app.example/cb?a=1&%63ode=1", true, "must not carry the query parameters code, state or iss, which the authorization response adds"],
  ])("%s (loopback http allowed: %s) → %s", (uri, allowLoopbackHttp, problem) => {
    expect(redirectUriProblem(uri, { allowLoopbackHttp })).toBe(problem);
  });
});

describe("isRegisteredRedirectUri", () => {
  const registered = ["https://app.example/auth/callback"];

  it("matches the exact string only", () => {
    expect(isRegisteredRedirectUri("https://app.example/auth/callback", registered)).toBe(true);
    expect(isRegisteredRedirectUri("https://app.example/auth/callback/", registered)).toBe(false);
    expect(isRegisteredRedirectUri("https://APP.example/auth/callback", registered)).toBe(false);
    expect(isRegisteredRedirectUri("https://app.example/auth/callback?x=1", registered)).toBe(false);
    expect(isRegisteredRedirectUri("https://app.example:443/auth/callback", registered)).toBe(false);
  });
});

describe("withoutAuthorizationResponseParameters", () => {
  it.each([
    ["https://app.example/cb", "https://app.example/cb"],
    ["https://app.example/cb?code=c&state=s&iss=https%3A%2F%2Fsignon", "https://app.example/cb"],
    ["https://app.example/cb?t=a%20b&code=c&state=s", "https://app.example/cb?t=a%20b"],
    ["https://app.example/cb?state=s&t=1&iss=i&code=c&u=2", "https://app.example/cb?t=1&u=2"],
    ["https://app.example/cb?codes=1&code", "https://app.example/cb?codes=1"],
  ])("%s → %s", (uri, expected) => {
    expect(withoutAuthorizationResponseParameters(uri)).toBe(expected);
  });
});

describe("redirectUriBinds", () => {
  const authorized = "https://app.example/auth/gds/callback";

  it("binds the same URI, and the callback URL carrying the response's parameters", () => {
    expect(redirectUriBinds(authorized, authorized)).toBe(true);
    expect(redirectUriBinds(`${authorized}?code=c&state=s&iss=https%3A%2F%2Fsignon.example`, authorized)).toBe(true);
    expect(redirectUriBinds("https://app.example/?code=c", "https://app.example")).toBe(true);
  });

  it("binds nothing else", () => {
    expect(redirectUriBinds(undefined, authorized)).toBe(false);
    expect(redirectUriBinds(`${authorized}?code=c&extra=1`, authorized)).toBe(false);
    expect(redirectUriBinds(`${authorized}/?code=c`, authorized)).toBe(false);
    expect(redirectUriBinds(`${authorized}#code=c`, authorized)).toBe(false);
    expect(redirectUriBinds("https://APP.example/auth/gds/callback?code=c", authorized)).toBe(false);
  });
});
