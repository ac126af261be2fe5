import { hash, timingSafeEqual } from "node:crypto";

/**
 * Compares two strings in time that does not depend on where they differ.
 * Both sides are hashed first so that their lengths do not leak either.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = hash("sha256", a, "buffer");
  const right = hash("sha256", b, "buffer");
  return timingSafeEqual(left, right) && a.length === b.length;
}
