import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createUser, defaultPassword } from "../support/factories.js";
import { parseSignInForm } from "../support/browser.js";
import { buildTestSignon, openTestDatabase, testConfig, type TestSignon } from "../support/signon.js";

const database = await openTestDatabase();
let signon: TestSignon;
beforeAll(async () => {
  signon = await buildTestSignon(
    database,
    testConfig({ NODE_ENV: "production", SIGNON_TRUST_PROXY: "true", SIGNON_PUBLIC_URL: "https://signon.example" }),
  );
});
afterAll(async () => {
  await signon.app.close();
  await database.close();
});
beforeEach(() => database.reset());

const overHttps = { "x-forwarded-proto": "https" };

describe("production mode over plain HTTP (S16)", () => {
  it("redirects a browser GET to HTTPS", async () => {
    const response = await signon.app.inject({ method: "GET", url: "/sign-in?return_to=%2F", headers: { accept: "text/html" } });
    expect(response.statusCode).toBe(301);
    expect(response.headers.location).toBe("https://signon.example/sign-in?return_to=%2F");
  });

  it("refuses API requests with 403", async () => {
    const response = await signon.app.inject({ method: "POST", url: "/token", headers: { "content-type": "application/x-www-form-urlencoded" }, payload: "grant_type=refresh_token" });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ error: "invalid_request", error_description: "HTTPS is required" });
  });
});

describe("production mode over HTTPS (S16)", () => {
  it("sends HSTS and sets Secure, HttpOnly, SameSite=Lax cookies bound to the host", async () => {
    const user = await createUser(signon.ctx);
    const page = await signon.app.inject({ method: "GET", url: "/sign-in", headers: overHttps });
    expect(page.statusCode).toBe(200);
    expect(page.headers["strict-transport-security"]).toBe("max-age=31536000; includeSubDomains");
    const csrfCookie = page.cookies.find((c) => c.name === "__Host-signon_csrf");
    expect(csrfCookie).toMatchObject({ secure: true, httpOnly: true, sameSite: "Lax", path: "/" });

    const form = parseSignInForm(page.body);
    const signedIn = await signon.app.inject({
      method: "POST",
      url: "/sign-in",
      headers: { ...overHttps, "content-type": "application/x-www-form-urlencoded", cookie: `__Host-signon_csrf=${String(csrfCookie?.value)}` },
      payload: new URLSearchParams({ _csrf: form.csrfToken, return_to: "/", email: user.email, password: defaultPassword }).toString(),
    });
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.cookies.find((c) => c.name === "__Host-signon_session")).toMatchObject({ secure: true, httpOnly: true, sameSite: "Lax", path: "/" });
  });
});

describe("POST /sign-in/passkey/options in production", () => {
  it("binds the challenge with a Secure, HttpOnly, SameSite=Strict cookie bound to the host", async () => {
    const page = await signon.app.inject({ method: "GET", url: "/sign-in", headers: overHttps });
    const csrfCookie = page.cookies.find((c) => c.name === "__Host-signon_csrf");
    const options = await signon.app.inject({
      method: "POST",
      url: "/sign-in/passkey/options",
      headers: { ...overHttps, "content-type": "application/json", cookie: `__Host-signon_csrf=${String(csrfCookie?.value)}` },
      payload: JSON.stringify({ _csrf: parseSignInForm(page.body).csrfToken }),
    });
    expect(options.statusCode).toBe(200);
    expect(options.json()).toMatchObject({ rpId: "signon.example", userVerification: "required" });
    expect(options.cookies.find((c) => c.name === "__Host-signon_passkey")).toMatchObject({ secure: true, httpOnly: true, sameSite: "Strict", path: "/", maxAge: 300 });
  });
});

describe("behind the trusted proxy", () => {
  it("treats a forwarded address that is not an IP as unknown, never as a server error", async () => {
    const response = await signon.app.inject({
      method: "POST",
      url: "/token",
      headers: { ...overHttps, "x-forwarded-for": "not-an-address", "content-type": "application/x-www-form-urlencoded" },
      payload: "grant_type=refresh_token&refresh_token=x&client_id=nobody&client_secret=guess",
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ error: "invalid_client", error_description: "Client authentication failed" });
  });
});
