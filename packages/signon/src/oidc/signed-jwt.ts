import { sign } from "node:crypto";
import type { SigningKey } from "./signing-keys.js";

function base64urlJson(value: object): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}

/**
 * Signs `claims` as a JWT of type `typ` in the JWS compact serialization:
 * `header.payload.signature`, each part base64url. ES256 signatures are the
 * 64-byte `r || s` form JWS requires (RFC 7518 §3.4), RS256 is
 * RSASSA-PKCS1-v1_5 with SHA-256.
 *
 * The signature is computed by `node:crypto` in libuv's thread pool, off the
 * event loop: signing the same token through WebCrypto (jose's `SignJWT`) took
 * about twice the event-loop time per token on the token endpoint, where an ID
 * token is signed on every OpenID Connect exchange. Tokens are checked with
 * jose's `jwtVerify` and by the OpenID Connect client libraries in the tests.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7515#section-7.1
 */
export function signJwt(typ: string, claims: Record<string, unknown>, key: SigningKey): Promise<string> {
  const input = `${base64urlJson({ alg: key.alg, kid: key.kid, typ })}.${base64urlJson(claims)}`;
  const signingKey = key.alg === "ES256" ? { key: key.privateKey, dsaEncoding: "ieee-p1363" as const } : key.privateKey;
  return new Promise((resolve, reject) => {
    sign("sha256", Buffer.from(input, "utf8"), signingKey, (error, signature) => {
      if (error) reject(error);
      else resolve(`${input}.${signature.toString("base64url")}`);
    });
  });
}
