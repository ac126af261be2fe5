import { createHash } from "node:crypto";
import { randomToken } from "./random.js";

/**
 * A new PKCE code verifier: 43 characters of the unreserved alphabet.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.1
 */
export function createCodeVerifier(): string {
  return randomToken();
}

/**
 * The S256 code challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))).
 *
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.2
 */
export function codeChallengeS256(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}
