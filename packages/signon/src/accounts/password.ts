import { randomBytes } from "node:crypto";
import { hash, verify, type Algorithm } from "@node-rs/argon2";
import { isImportedPasswordHash, verifyImportedPassword } from "./imported-passwords.js";

// The package exports `Algorithm` as an ambient const enum, which isolated modules cannot read.
const argon2id: Algorithm.Argon2id = 2;

/** argon2id cost parameters; production uses the defaults, tests lower them. */
export interface PasswordHashingCost {
  /** Memory in KiB. */
  memoryCost: number;
  timeCost: number;
  parallelism: number;
  /** Signon's `DEVISE_PEPPER`, for the password hashes imported from it (`SIGNON_IMPORTED_PASSWORD_PEPPER`); null without one. */
  importedPepper?: string | null;
}

/** OWASP's first recommended argon2id configuration (19 MiB, 2 passes, 1 lane). */
export const defaultPasswordHashingCost: PasswordHashingCost = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** Hashes a password with argon2id; the result is a self-describing PHC string. */
export async function hashPassword(password: string, cost: PasswordHashingCost): Promise<string> {
  const { memoryCost, timeCost, parallelism } = cost;
  return hash(password, { algorithm: argon2id, memoryCost, timeCost, parallelism });
}

/** Whether `stored` is not Sign-on's own kind of hash (one imported from Signon), to be replaced once the password is known. */
export function needsRehash(stored: string): boolean {
  return isImportedPasswordHash(stored);
}

const dummyHashes = new Map<string, Promise<string>>();

/** A fixed hash of a random password at `cost`, made once per cost, that no password matches in practice. */
function dummyHash(cost: PasswordHashingCost): Promise<string> {
  const key = `${cost.memoryCost}:${cost.timeCost}:${cost.parallelism}`;
  let made = dummyHashes.get(key);
  if (!made) {
    made = hashPassword(randomBytes(32).toString("hex"), cost);
    dummyHashes.set(key, made);
  }
  return made;
}

/**
 * Checks a password against a stored hash. With no stored hash (unknown
 * user, or an account without a password) the password is checked against a
 * fixed dummy hash of the same cost, so the answer does the same work and
 * takes as long as for a real account (S15). A hash imported from Signon is
 * checked as Signon checked it, and the dummy hash too, so that an imported
 * account answers in the time the others do.
 */
export async function verifyPassword(
  storedHash: string | null,
  password: string,
  cost: PasswordHashingCost,
): Promise<boolean> {
  if (storedHash === null) {
    try {
      await verify(await dummyHash(cost), password);
    } catch {
      // Same as a stored hash that cannot be read: not a match.
    }
    return false;
  }
  if (isImportedPasswordHash(storedHash)) {
    const [matches] = await Promise.all([verifyImportedPassword(storedHash, password, cost.importedPepper ?? null), verify(await dummyHash(cost), password).catch(() => false)]);
    return matches;
  }
  try {
    return await verify(storedHash, password);
  } catch {
    return false;
  }
}
