import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** 32 bytes from the CSPRNG, base64url-encoded (43 characters). */
export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

/** SHA-256 of `value`, hex-encoded: how secrets are used as keys without being kept. */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** Compares two strings in time independent of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash("sha256").update(a).digest();
  const right = createHash("sha256").update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}
