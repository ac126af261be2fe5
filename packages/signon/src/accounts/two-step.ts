import { Secret, TOTP } from "otpauth";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { deleteRememberedBrowsersOfUser } from "../repositories/remembered-browsers.js";
import { pushesCommitted } from "../pushes/queue.js";
import { endSignInsEverywhere } from "./end-sign-ins-everywhere.js";
import { deletePasskeysOfUser } from "../repositories/passkeys.js";
import { clearOtp, enableOtp, storePendingOtpSecret } from "../repositories/two-step-secrets.js";
import { findUserByUid, type User } from "../repositories/users.js";
import { recordFailure, secondsUntilAllowed, type FailureLimit } from "../security/failure-limit.js";
import { openSecret, sealSecret, SecretBoxError } from "../security/secret-box.js";
import { AccountError } from "./manage-users.js";

/** The issuer authenticator apps show next to the account. */
export const otpIssuer = "Tessera Sign-on";
/** Codes are checked for the current 30-second step and one step either side, for clocks that drift. */
export const otpWindow = 1;
const otpPeriodSeconds = 30;
const otpDigits = 6;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** 160-bit secrets, the size RFC 4226 recommends for HMAC-SHA1. */
const otpSecretBytes = 20;

/** What the set-up page shows: the secret as base32 (for typing in) and the `otpauth://` URI (for the QR code). */
export interface TwoStepSetup {
  secret: string;
  uri: string;
}

/**
 * The key that seals authenticator secrets: the one resolved at start-up
 * (`ctx.secretKey`), else the configured one.
 */
export function otpSecretKey(ctx: SignonContext): Buffer {
  const key = ctx.secretKey ?? ctx.config.secretKey;
  if (!key) throw new Error("no secret key: resolve it at start-up (resolveSecretKey) and pass it in the context");
  return key;
}

function totpFor(user: Pick<User, "email">, secret: Secret): TOTP {
  return new TOTP({ issuer: otpIssuer, label: user.email, algorithm: "SHA1", digits: otpDigits, period: otpPeriodSeconds, secret });
}

/** Whether a string has the shape of a code: six digits. Spaces people type between groups are removed first. */
export function normaliseOtpCode(raw: string): string | null {
  const code = raw.replace(/[\s-]/g, "");
  return /^\d{6}$/.test(code) ? code : null;
}

/**
 * The time step a code belongs to, when it is right for `secret` at `now`
 * (within `otpWindow` steps), or `null`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6238#section-5.2
 */
export function matchingOtpStep(user: Pick<User, "email">, secret: Secret, code: string, now: Date): number | null {
  const timestamp = now.getTime();
  const delta = totpFor(user, secret).validate({ token: code, timestamp, window: otpWindow });
  if (delta === null) return null;
  return TOTP.counter({ period: otpPeriodSeconds, timestamp }) + delta;
}

/** The user's authenticator secret, opened with the service key, or `null` when there is none or it no longer opens. */
export function openOtpSecret(ctx: SignonContext, user: Pick<User, "otpSecretEncrypted">): Secret | null {
  if (user.otpSecretEncrypted === null) return null;
  try {
    return Secret.fromBase32(openSecret(otpSecretKey(ctx), user.otpSecretEncrypted));
  } catch (error) {
    if (error instanceof SecretBoxError) return null;
    throw error;
  }
}

/**
 * Starts (or continues) setting up 2-step verification: the secret being set
 * up stays the same until it is confirmed, so reloading the page does not
 * invalidate a QR code already scanned. Only the sealed secret is stored.
 * Returns `null` when 2-step verification is already on.
 */
export async function beginTwoStepSetup(ctx: SignonContext, user: User): Promise<TwoStepSetup | null> {
  if (user.otpEnabledAt !== null) return null;
  let secret = openOtpSecret(ctx, user);
  if (secret === null) {
    secret = new Secret({ size: otpSecretBytes });
    await storePendingOtpSecret(ctx.db, user.uid, sealSecret(otpSecretKey(ctx), secret.base32), ctx.now());
  }
  return { secret: secret.base32, uri: totpFor(user, secret).toString() };
}

/** Wrong codes while setting up 2-step verification, per user: past this, set-up waits (S15). */
export const twoStepSetupLimit: FailureLimit = { name: "two-step-setup", maxFailures: 10, windowSeconds: 600 };

export type TwoStepSetupResult =
  | { ok: true }
  | { ok: false; reason: "wrong_code" | "already_on" | "not_started" }
  | { ok: false; reason: "too_many_wrong_codes"; retryAfterSeconds: number };

/**
 * Confirms the set-up with a code from the authenticator app, which turns
 * 2-step verification on (`otpEnabledAt`). The code's time step counts as
 * used, so it cannot sign in again. Wrong codes are counted per user
 * (`twoStepSetupLimit`); over the limit no code is checked until the window
 * ends, so the set-up cannot be used to guess codes.
 */
export async function confirmTwoStepSetup(ctx: SignonContext, userUid: string, rawCode: string, origin: RequestOrigin): Promise<TwoStepSetupResult> {
  const user = await findUserByUid(ctx.db, userUid);
  if (!user) return { ok: false, reason: "not_started" };
  if (user.otpEnabledAt !== null) return { ok: false, reason: "already_on" };
  const secret = openOtpSecret(ctx, user);
  if (secret === null) return { ok: false, reason: "not_started" };
  const now = ctx.now();
  const wait = await secondsUntilAllowed(ctx.db, twoStepSetupLimit, [user.uid], now);
  if (wait !== null) return { ok: false, reason: "too_many_wrong_codes", retryAfterSeconds: wait };
  const code = normaliseOtpCode(rawCode);
  const step = code === null ? null : matchingOtpStep(user, secret, code, now);
  if (step === null) {
    await recordFailure(ctx.db, twoStepSetupLimit, [user.uid], now);
    return { ok: false, reason: "wrong_code" };
  }
  return ctx.db.transaction(async (tx) => {
    if (!(await enableOtp(tx, user.uid, step, now))) return { ok: false, reason: "already_on" } as const;
    await audit(tx, { action: "two_step_enabled", at: now, actorUid: user.uid, subjectUid: user.uid, origin });
    return { ok: true } as const;
  });
}

/**
 * An administrator resets a user's 2-step verification (a lost phone): the
 * secret, `otpEnabledAt`, the wrong-code count and the last accepted step are
 * cleared, every passkey of the user is removed, every remembered browser is forgotten and every sign-in of the
 * user ends (S18: sessions, every application's tokens, reauth pushed), so
 * their next sign-in sets it up again. The caller checks that `actor` may
 * manage the user (`mayManageUser`).
 *
 * @throws AccountError when there is no such user.
 */
export async function resetTwoStep(ctx: SignonContext, targetUid: string, actor: User, origin: RequestOrigin): Promise<void> {
  if (!uuidPattern.test(targetUid)) throw new AccountError("No such user");
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
    const passkeysRemoved = await deletePasskeysOfUser(tx, targetUid, now);
    const cleared = await clearOtp(tx, targetUid, now);
    if (!cleared) throw new AccountError("No such user");
    await deleteRememberedBrowsersOfUser(tx, targetUid);
    await audit(tx, {
      action: "two_step_reset",
      at: now,
      actorUid: actor.uid,
      subjectUid: targetUid,
      origin,
      ...(passkeysRemoved > 0 ? { details: { passkeys_removed: passkeysRemoved } } : {}),
    });
    await endSignInsEverywhere(tx, { user: cleared, cause: "two_step_reset", now, fanOut: ctx.config.pushes.fanOut, actorUid: actor.uid, origin });
  });
  pushesCommitted(ctx);
}
