import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Compares two strings in time that does not depend on where they differ.
 * Both sides are hashed first so that their lengths do not leak either.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash("sha256").update(a, "utf8").digest();
  const right = createHash("sha256").update(b, "utf8").digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}
