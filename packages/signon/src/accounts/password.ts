import { hash, verify, type Algorithm } from "@node-rs/argon2";

// The package exports `Algorithm` as an ambient const enum, which isolated modules cannot read.
const argon2id: Algorithm.Argon2id = 2;

/** argon2id cost parameters; production uses the defaults, tests lower them. */
export interface PasswordHashingCost {
  /** Memory in KiB. */
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

/** OWASP's first recommended argon2id configuration (19 MiB, 2 passes, 1 lane). */
export const defaultPasswordHashingCost: PasswordHashingCost = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** Hashes a password with argon2id; the result is a self-describing PHC string. */
export async function hashPassword(password: string, cost: PasswordHashingCost): Promise<string> {
  return hash(password, { algorithm: argon2id, ...cost });
}

/**
 * Checks a password against a stored hash. With no stored hash (unknown user,
 * or an account without a password) a throwaway hash is still computed, so
 * the answer takes as long as for a real account.
 */
export async function verifyPassword(
  storedHash: string | null,
  password: string,
  cost: PasswordHashingCost,
): Promise<boolean> {
  if (storedHash === null) {
    await hashPassword(password, cost);
    return false;
  }
  try {
    return await verify(storedHash, password);
  } catch {
    return false;
  }
}
