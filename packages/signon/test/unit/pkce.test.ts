import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isS256Challenge, verifyS256 } from "../../src/oauth/pkce.js";

// RFC 7636 Appendix B.
const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

describe("PKCE S256", () => {
  it("accepts the verifier of RFC 7636 Appendix B", () => {
    expect(verifyS256(verifier, challenge)).toBe(true);
  });

  it("refuses a different verifier", () => {
    expect(verifyS256(`${verifier.slice(0, -1)}Y`, challenge)).toBe(false);
  });

  it("refuses a verifier that is too short or has characters outside the unreserved set", () => {
    const short = "a".repeat(42);
    expect(verifyS256(short, createHash("sha256").update(short).digest("base64url"))).toBe(false);
    const spaced = `${"a".repeat(42)} `;
    expect(verifyS256(spaced, createHash("sha256").update(spaced).digest("base64url"))).toBe(false);
  });

  it("recognises the shape of an S256 challenge", () => {
    expect(isS256Challenge(challenge)).toBe(true);
    expect(isS256Challenge(verifier.slice(0, 42))).toBe(false);
    expect(isS256Challenge(`${challenge.slice(0, 42)}=`)).toBe(false);
  });
});
