import { createDecipheriv, pbkdf2Sync } from "node:crypto";
import { inflateSync } from "node:zlib";

/**
 * Reads a value that Rails' Active Record encryption wrote (Signon's
 * `users.otp_secret_key`): JSON `{"p": ciphertext, "h": {"iv", "at", "c"?}}`,
 * each part base64, AES-256-GCM with no associated data, compressed with zlib
 * first when `c` is true. The key is PBKDF2 of the primary key with the key
 * derivation salt, 2^16 rounds, 32 bytes: with SHA-256 since Rails 7.1, with
 * SHA-1 before (Signon re-encrypted with SHA-256 in 2024, older copies may
 * hold either), so both are tried.
 */
export interface ActiveRecordKeys {
  /** `ACTIVE_RECORD_ENCRYPTION_PRIMARY_KEY`; several when Signon's configuration lists several (all are tried). */
  primaryKeys: string[];
  /** `ACTIVE_RECORD_ENCRYPTION_KEY_DERIVATION_SALT`. */
  derivationSalt: string;
}

/** The keys to try, derived once (each derivation takes tens of milliseconds). */
export function derivedKeys(keys: ActiveRecordKeys): Buffer[] {
  const derived: Buffer[] = [];
  for (const digest of ["sha256", "sha1"]) {
    for (const primaryKey of [...keys.primaryKeys].reverse()) derived.push(pbkdf2Sync(primaryKey, keys.derivationSalt, 2 ** 16, 32, digest));
  }
  return derived;
}

export class UnreadableEncryptedValue extends Error {}

/** The plain text of `stored`, or UnreadableEncryptedValue when it is not such a value or none of `keys` opens it. */
export function decryptActiveRecordValue(stored: string, keys: Buffer[]): string {
  let message: { p?: unknown; h?: { iv?: unknown; at?: unknown; c?: unknown } };
  try {
    message = JSON.parse(stored) as typeof message;
  } catch {
    throw new UnreadableEncryptedValue("not an Active Record encrypted value (not JSON)");
  }
  if (typeof message !== "object" || message === null) throw new UnreadableEncryptedValue("not an Active Record encrypted value (not a JSON object)");
  const { p, h } = message;
  if (typeof p !== "string" || typeof h?.iv !== "string" || typeof h.at !== "string") {
    throw new UnreadableEncryptedValue("not an Active Record encrypted value (no p, h.iv or h.at)");
  }
  const ciphertext = Buffer.from(p, "base64");
  const iv = Buffer.from(h.iv, "base64");
  const tag = Buffer.from(h.at, "base64");
  if (iv.length !== 12 || tag.length !== 16) throw new UnreadableEncryptedValue("not an Active Record encrypted value (IV or tag of the wrong size)");
  for (const key of keys) {
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, iv);
      decipher.setAuthTag(tag);
      const plain = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
      return (h.c === true ? inflateSync(plain) : plain).toString("utf8");
    } catch {
      // Another key, or another digest.
    }
  }
  throw new UnreadableEncryptedValue("none of the keys given opens it");
}
