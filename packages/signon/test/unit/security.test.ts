import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { constantTimeEqual } from "../../src/security/constant-time.js";
import { accessTokenLifetimeSeconds, newTokenValues } from "../../src/oauth/issue-tokens.js";
import { randomHex, sha256Hex } from "../../src/security/random.js";

describe("randomHex", () => {
  it("gives 32 random bytes as 64 hex characters, different every time", () => {
    const values = new Set(Array.from({ length: 100 }, () => randomHex()));
    expect(values.size).toBe(100);
    for (const value of values) expect(value).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("newTokenValues", () => {
  it("gives an access token and a refresh token of 32 random bytes each, never the same twice, and the access token's expiry", () => {
    const now = new Date("2026-11-27T12:00:00Z");
    const issued = Array.from({ length: 100 }, () => newTokenValues(now));
    const tokens = issued.flatMap(({ accessToken, refreshToken }) => [accessToken, refreshToken]);
    for (const token of tokens) expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(tokens).size).toBe(200);
    expect(issued[0]?.accessTokenExpiresAt.getTime()).toBe(now.getTime() + accessTokenLifetimeSeconds * 1000);
  });
});

describe("sha256Hex", () => {
  it("is the hex SHA-256 digest of the UTF-8 value", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256Hex("é")).toBe(createHash("sha256").update(Buffer.from([0xc3, 0xa9])).digest("hex"));
  });
});

describe("constantTimeEqual", () => {
  it("is true for equal strings only", () => {
    expect(constantTimeEqual("secret", "secret")).toBe(true);
    expect(constantTimeEqual("secret", "secreT")).toBe(false);
    expect(constantTimeEqual("secret", "secret-longer")).toBe(false);
    expect(constantTimeEqual("", "")).toBe(true);
  });
});
