import { describe, expect, it } from "vitest";
import { isRegisteredRedirectUri, redirectUriProblem } from "../../src/oauth/redirect-uri.js";

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
