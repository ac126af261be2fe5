import { describe, expect, it } from "vitest";
import { codeChallengeS256, createCodeVerifier } from "../src/oauth/pkce.js";

describe("PKCE", () => {
  it("computes the S256 challenge of RFC 7636 Appendix B", () => {
    expect(codeChallengeS256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe(
      "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    );
  });

  it("creates verifiers of 43 unreserved characters, different each time", () => {
    const verifiers = new Set([createCodeVerifier(), createCodeVerifier(), createCodeVerifier()]);

    expect(verifiers.size).toBe(3);
    for (const verifier of verifiers) expect(verifier).toMatch(/^[A-Za-z0-9\-._~]{43}$/);
  });
});
