import { randomBytes } from "node:crypto";
import type { ZxcvbnFactory } from "@zxcvbn-ts/core";
import type { SignonContext } from "../context.js";

/** What checking a password reads: the person's password history, and the hashing cost to compare with it. */
type PolicyContext = Pick<SignonContext, "db" | "config">;
import { recentPasswordHashes } from "../repositories/password-history.js";
import type { User } from "../repositories/users.js";
import { verifyPassword } from "./password.js";

/** Messages for form fields, by field name. */
export type FieldErrors = Record<string, string>;

/** Shortest and longest password a person may choose. */
export const passwordLengths = { min: 10, max: 128 } as const;
/** Lowest zxcvbn score accepted (0 to 4: 3 is "safely unguessable"). */
export const minimumPasswordScore = 3;
/** A new password may not be one of this many most recent ones. */
export const passwordsRemembered = 2;

let estimator: Promise<ZxcvbnFactory> | undefined;

/**
 * The password strength estimator, made at the first password check: its
 * word lists take more than 30 MB, which a server that nobody chooses a
 * password on (most of the time) does not need to hold.
 */
function strengthEstimator(): Promise<ZxcvbnFactory> {
  estimator ??= (async () => {
    const [{ ZxcvbnFactory }, zxcvbnCommon, zxcvbnEnglish] = await Promise.all([
      import("@zxcvbn-ts/core"),
      import("@zxcvbn-ts/language-common"),
      import("@zxcvbn-ts/language-en"),
    ]);
    return new ZxcvbnFactory({
      dictionary: { ...zxcvbnCommon.dictionary, ...zxcvbnEnglish.dictionary },
      graphs: zxcvbnCommon.adjacencyGraphs,
      translations: zxcvbnEnglish.translations,
    });
  })();
  return estimator;
}

/** Words a guesser would try first for this person: their name and e-mail address, whole and in parts. */
function personalWords(person: { email: string; name: string }): string[] {
  const words = [person.name, person.email, person.email.split("@")[0] ?? "", ...person.name.split(/\s+/)];
  return [...new Set(words.map((word) => word.trim()).filter((word) => word.length >= 3))];
}

/**
 * Checks a password a person chose: 10 to 128 characters, a zxcvbn score of
 * at least 3 (their name and e-mail address count as easy guesses), and, for
 * an existing account, not one of their last 2 passwords. Returns messages
 * for the `password` field; an empty object means the password is acceptable.
 */
export async function checkNewPassword(
  ctx: PolicyContext,
  person: Pick<User, "uid" | "email" | "name" | "passwordHash"> | { email: string; name: string },
  password: string,
): Promise<FieldErrors> {
  const length = [...password].length;
  if (length < passwordLengths.min) return { password: `Enter a password of at least ${passwordLengths.min} characters` };
  if (length > passwordLengths.max) return { password: `Enter a password of at most ${passwordLengths.max} characters` };
  const result = (await strengthEstimator()).check(password, personalWords(person));
  if (result.score < minimumPasswordScore) {
    // The estimator's hints are sentences of their own; their closing stop would double the sentence's.
    const hint = (result.feedback.warning ?? result.feedback.suggestions[0] ?? "").replace(/[.\s]+$/u, "");
    return { password: `Choose a password that is harder to guess${hint ? `: ${hint}` : ""}. A few unrelated words make a good one.` };
  }
  if ("uid" in person && (await isRecentPassword(ctx, person, password))) {
    return { password: `Choose a password you have not used before: it cannot be one of your last ${passwordsRemembered}` };
  }
  return {};
}

/** The message for the `password` field when `password` is refused for `person`, `null` when it is acceptable. */
export async function newPasswordProblem(
  ctx: PolicyContext,
  person: Parameters<typeof checkNewPassword>[1],
  password: string,
): Promise<string | null> {
  return (await checkNewPassword(ctx, person, password)).password ?? null;
}

/**
 * A random password for `person` that passes {@link checkNewPassword}: 24
 * characters of base64url (144 random bits), drawn again in the unlikely
 * case that the estimator finds one easy to guess.
 */
export async function generatePassword(ctx: PolicyContext, person: { email: string; name: string }): Promise<string> {
  for (let attempt = 1; ; attempt += 1) {
    const password = randomBytes(18).toString("base64url");
    const problem = await newPasswordProblem(ctx, person, password);
    if (problem === null) return password;
    // 144 random bits fail the estimator almost never; ten failures in a row mean the policy, not chance.
    if (attempt === 10) throw new Error(`No generated password passes the password policy: ${problem}`);
  }
}

async function isRecentPassword(ctx: PolicyContext, user: Pick<User, "uid" | "passwordHash">, password: string): Promise<boolean> {
  // The current password counts as one of the last ones, recorded in the history or not.
  const hashes = new Set(await recentPasswordHashes(ctx.db, user.uid, passwordsRemembered));
  if (user.passwordHash !== null) hashes.add(user.passwordHash);
  for (const hash of hashes) {
    if (await verifyPassword(hash, password, ctx.config.passwordHashing)) return true;
  }
  return false;
}

/**
 * Checks a "new password" form: the password against the policy, and that the
 * confirmation repeats it. Returns messages for `password` and `confirmation`.
 */
export async function checkNewPasswordForm(
  ctx: SignonContext,
  person: Parameters<typeof checkNewPassword>[1],
  password: string,
  confirmation: string,
): Promise<FieldErrors> {
  const errors = await checkNewPassword(ctx, person, password);
  if (confirmation === "") errors.confirmation = "Enter the new password again";
  else if (confirmation !== password) errors.confirmation = "The two passwords are not the same";
  return errors;
}
