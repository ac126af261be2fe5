import { describe, expect, it } from "vitest";
import { writeOAuthError } from "../../src/oauth/error-response.js";
import {
  InvalidClientError,
  InvalidGrantError,
  InvalidTokenError,
  TooManyAttemptsError,
  UnsupportedGrantTypeError,
} from "../../src/oauth/errors.js";

describe("writeOAuthError", () => {
  it("writes the RFC 6749 body with the error's status", () => {
    expect(writeOAuthError(new InvalidGrantError("The code has expired"))).toEqual({
      status: 400,
      headers: { "cache-control": "no-store" },
      body: { error: "invalid_grant", error_description: "The code has expired" },
    });
  });

  it("leaves out an empty description", () => {
    expect(writeOAuthError(new UnsupportedGrantTypeError()).body).toEqual({ error: "unsupported_grant_type" });
  });

  it("challenges with Basic when the client used Basic", () => {
    expect(writeOAuthError(new InvalidClientError("Unknown client", { usedBasic: true }))).toEqual({
      status: 401,
      headers: { "cache-control": "no-store", "www-authenticate": 'Basic realm="signon", charset="UTF-8"' },
      body: { error: "invalid_client", error_description: "Unknown client" },
    });
    expect(writeOAuthError(new InvalidClientError("Unknown client")).headers).toEqual({ "cache-control": "no-store" });
  });

  it("sends Retry-After with 429", () => {
    expect(writeOAuthError(new TooManyAttemptsError(12.2))).toMatchObject({ status: 429, headers: { "retry-after": "13" } });
  });

  it("sends a Bearer challenge for an invalid token", () => {
    expect(writeOAuthError(new InvalidTokenError()).headers["www-authenticate"]).toBe('Bearer realm="signon", error="invalid_token"');
  });

  it("keeps the description within the characters RFC 6749 allows", () => {
    expect(writeOAuthError(new InvalidGrantError('bad "code" \\ é')).body.error_description).toBe("bad ?code? ? ?");
  });

  it("turns anything unexpected into a bare server_error", () => {
    expect(writeOAuthError(new Error("connection to 10.0.0.5 refused"))).toEqual({
      status: 500,
      headers: { "cache-control": "no-store" },
      body: { error: "server_error" },
    });
    expect(writeOAuthError("a string")).toEqual({ status: 500, headers: { "cache-control": "no-store" }, body: { error: "server_error" } });
  });
});
