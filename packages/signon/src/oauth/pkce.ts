import { createHash } from "node:crypto";
import { constantTimeEqual } from "../security/constant-time.js";

// RFC 7636 §4.1 and §4.2: 43 to 128 unreserved characters; an S256 challenge is 43 base64url characters.
const verifierPattern = /^[A-Za-z0-9\-._~]{43,128}$/;
const s256ChallengePattern = /^[A-Za-z0-9\-_]{43}$/;

/** Whether a `code_challenge` has the shape of an S256 challenge. @see https://www.rfc-editor.org/rfc/rfc7636#section-4.2 */
export function isS256Challenge(challenge: string): boolean {
  return s256ChallengePattern.test(challenge);
}

/**
 * The S256 challenge of a `code_verifier`, or `null` when the verifier is not
 * 43 to 128 unreserved characters (then it can match no challenge).
 *
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.2
 */
export function s256ChallengeOf(verifier: string): string | null {
  if (!verifierPattern.test(verifier)) return null;
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

/**
 * Checks a `code_verifier` against the S256 `code_challenge` stored with the code.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.6
 */
export function verifyS256(verifier: string, challenge: string): boolean {
  if (!verifierPattern.test(verifier)) return false;
  const computed = createHash("sha256").update(verifier, "ascii").digest("base64url");
  return constantTimeEqual(computed, challenge);
}
