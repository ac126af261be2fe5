import { createHash, timingSafeEqual } from "node:crypto";

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/**
 * Whether an `Authorization` header value is `Bearer <expected>`. The
 * comparison is of SHA-256 digests with `timingSafeEqual`, so its time says
 * nothing about how much of the token was right, nor about its length.
 */
export function bearerTokenMatches(authorization: string | undefined, expected: string): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
  const given = match?.[1] ?? "";
  return timingSafeEqual(digest(given), digest(expected)) && given !== "";
}
