import { createPrivateKey, type JsonWebKey } from "node:crypto";
import { decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { signJwt } from "../../src/oidc/signed-jwt.js";
import { signingAlgorithms } from "../../src/oidc/signing-keys.js";

async function keyPair(alg: (typeof signingAlgorithms)[number]) {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  return { publicKey, signingKey: { kid: `kid-${alg}`, alg, privateKey: createPrivateKey({ key: privateJwk as JsonWebKey, format: "jwk" }) } };
}

describe("signJwt", () => {
  for (const alg of signingAlgorithms) {
    it(`signs a JWT that jose verifies with the ${alg} public key, with the key id and type in its header`, async () => {
      const { publicKey, signingKey } = await keyPair(alg);
      const claims = { iss: "https://signon.example", sub: "someone", aud: "client", iat: 1_700_000_000, exp: 4_000_000_000, nonce: "n-ü" };
      const token = await signJwt("JWT", claims, signingKey);

      const { payload, protectedHeader } = await jwtVerify(token, publicKey, { algorithms: [alg], issuer: "https://signon.example", audience: "client", typ: "JWT" });
      expect(payload).toEqual(claims);
      expect(protectedHeader).toEqual({ alg, kid: `kid-${alg}`, typ: "JWT" });
    });
  }

  it("does not verify under another key of the same algorithm", async () => {
    const { signingKey } = await keyPair("ES256");
    const other = await keyPair("ES256");
    const token = await signJwt("logout+jwt", { sub: "someone" }, signingKey);
    expect(decodeProtectedHeader(token).typ).toBe("logout+jwt");
    await expect(jwtVerify(token, other.publicKey)).rejects.toThrow(/signature verification failed/);
  });
});
