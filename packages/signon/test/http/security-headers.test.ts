import { describe, expect, it } from "vitest";
import { useTestSignon } from "../support/signon.js";

const { signon } = await useTestSignon();

/** The security headers every response carries in development mode (production adds HSTS; see production-https.test.ts). */
const expected = {
  "content-security-policy": "default-src 'none';script-src 'self';connect-src 'self';style-src 'self';img-src 'self';base-uri 'none';frame-ancestors 'none'",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "origin-agent-cluster": "?1",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-dns-prefetch-control": "off",
  "x-download-options": "noopen",
  "x-frame-options": "SAMEORIGIN",
  "x-permitted-cross-domain-policies": "none",
  "x-xss-protection": "0",
};

describe("security headers", () => {
  it.each([
    ["an HTML page", { method: "GET" as const, url: "/sign-in" }, 200],
    ["a token error", { method: "POST" as const, url: "/token", headers: { "content-type": "application/x-www-form-urlencoded" }, payload: "grant_type=refresh_token&client_id=x&client_secret=y" }, 401],
    ["an unknown path", { method: "GET" as const, url: "/no-such-page" }, 404],
  ])("are on %s, and no HSTS in development", async (_name, request, status) => {
    const response = await signon.app.inject(request);
    expect(response.statusCode).toBe(status);
    expect(response.headers).toMatchObject(expected);
    expect(response.headers["strict-transport-security"]).toBeUndefined();
    expect(response.headers["x-powered-by"]).toBeUndefined();
  });
});
