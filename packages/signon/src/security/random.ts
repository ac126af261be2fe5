import { hash, randomBytes } from "node:crypto";

/**
 * A fresh random value: 32 bytes from the CSPRNG, hex-encoded (64 characters),
 * as used for access tokens, refresh tokens, codes, client ids and secrets (S5).
 */
export function randomHex(bytes = 32): string {
  return randomBytes(bytes).toString("hex");
}

/** SHA-256 digest of a secret value, hex-encoded: how tokens and secrets are stored (S5). */
export function sha256Hex(value: string): string {
  return hash("sha256", value, "hex");
}
