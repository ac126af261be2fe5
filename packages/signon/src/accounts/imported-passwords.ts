import { createHash, timingSafeEqual } from "node:crypto";
import bcrypt from "bcryptjs";

/**
 * Password hashes brought over from GOV.UK Signon (`signon import-from-signon`),
 * kept as Signon made them until the person's next sign-in replaces them with
 * Sign-on's own (argon2id):
 *
 * - Devise's `sha512` encryptor, stored as `$signon-sha512$STRETCHES$SALT$DIGEST`:
 *   the digest starts as the pepper, and each of STRETCHES rounds replaces it
 *   with the hex SHA-512 of `--SALT--DIGEST--PASSWORD--PEPPER--`. The pepper
 *   (Signon's `DEVISE_PEPPER`) is not stored: it is the setting
 *   `SIGNON_IMPORTED_PASSWORD_PEPPER`.
 * - bcrypt (`$2a$…`), for accounts whose password has not changed since
 *   Signon used it, checked without the pepper as Signon checked it.
 */
export const signonSha512Prefix = "$signon-sha512$";

/** The most rounds an imported hash may ask for: Signon uses 1,000 (and 1 in its tests). */
const maxStretches = 100_000;

/** A Devise sha512 hash in the form Sign-on stores it. */
export function signonSha512Hash(stretches: number, salt: string, digest: string): string {
  return `${signonSha512Prefix}${stretches}$${salt}$${digest.toLowerCase()}`;
}

/** Whether `stored` is a hash imported from Signon, to be replaced at the next sign-in. */
export function isImportedPasswordHash(stored: string): boolean {
  return stored.startsWith(signonSha512Prefix) || isBcrypt(stored);
}

function isBcrypt(stored: string): boolean {
  return /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/.test(stored);
}

/** Devise's sha512 digest of `password`. */
export function deviseSha512(password: string, stretches: number, salt: string, pepper: string): string {
  let digest = pepper;
  for (let round = 0; round < stretches; round++) {
    digest = createHash("sha512").update(`--${salt}--${digest}--${password}--${pepper}--`).digest("hex");
  }
  return digest;
}

/**
 * Checks `password` against an imported hash; false for a hash that cannot be
 * read, and for a sha512 hash while no pepper is set (it cannot match then).
 */
export async function verifyImportedPassword(stored: string, password: string, pepper: string | null): Promise<boolean> {
  if (isBcrypt(stored)) return bcrypt.compare(password, stored);
  const [stretchesText, salt, digest] = stored.slice(signonSha512Prefix.length).split("$");
  const stretches = Number(stretchesText);
  if (pepper === null || salt === undefined || digest === undefined || !Number.isInteger(stretches) || stretches < 1 || stretches > maxStretches) return false;
  if (!/^[0-9a-f]{128}$/.test(digest)) return false;
  const computed = Buffer.from(deviseSha512(password, stretches, salt, pepper), "hex");
  return timingSafeEqual(computed, Buffer.from(digest, "hex"));
}
