import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { insertRememberedBrowser, isBrowserRemembered } from "../repositories/remembered-browsers.js";
import { deleteSession } from "../repositories/sessions.js";
import { acceptOtpStep } from "../repositories/two-step-secrets.js";
import type { User } from "../repositories/users.js";
import { randomHex, sha256Hex } from "../security/random.js";
import { resolveWebSession, startSession, type WebSession } from "./sessions.js";
import { clearSourceFailures, countSignInFailureFor, isLocked, secondsUntilSignInAllowed } from "./sign-in-limits.js";
import { hasSecondFactor } from "./two-step-mandate.js";
import { matchingOtpStep, normaliseOtpCode, openOtpSecret } from "./two-step.js";

/** A remembered browser skips the 2-step code for this long. */
export const rememberBrowserSeconds = 30 * 24 * 3600;

/**
 * Whether a user must give a second factor at sign-in (a code or a passkey):
 * they have one and this browser is not remembered for them.
 */
export async function needsSecondFactor(ctx: SignonContext, user: User, rememberToken: string | undefined): Promise<boolean> {
  if (!hasSecondFactor(user)) return false;
  if (rememberToken === undefined || !/^[0-9a-f]{64}$/.test(rememberToken)) return true;
  return !(await isBrowserRemembered(ctx.db, sha256Hex(rememberToken), user.uid, ctx.now()));
}

export type SecondFactorResult =
  | {
      ok: true;
      user: User;
      /** The new session id (the half-signed-in one is gone). */
      sessionId: string;
      /** The cookie value that remembers this browser, when asked for. */
      rememberToken: string | null;
    }
  | { ok: false; reason: "no_session" | "wrong_code" | "reused_code" | "locked" }
  | { ok: false; reason: "refused"; retryAfterSeconds: number };

/**
 * The start of every second factor, a code or a passkey: the browser's
 * session must wait for one; a source refused for the person's address
 * (`refused`) or a locked account (`locked`, audited as `sign_in_refused`)
 * ends the half-signed-in session before anything is checked.
 */
export async function openSecondFactorStep(
  ctx: SignonContext,
  sessionId: string | undefined,
  origin: RequestOrigin,
): Promise<{ ok: true; session: WebSession; sessionId: string; now: Date } | Exclude<SecondFactorResult, { ok: true }>> {
  const session = await resolveWebSession(ctx, sessionId);
  if (!session || !session.awaitingSecondFactor || sessionId === undefined) return { ok: false, reason: "no_session" };
  const { user } = session;
  const now = ctx.now();
  const refusedFor = await secondsUntilSignInAllowed(ctx, user.email, origin, now);
  if (refusedFor !== null) {
    await deleteSession(ctx.db, session.idHash);
    return { ok: false, reason: "refused", retryAfterSeconds: refusedFor };
  }
  if (isLocked(user, now)) {
    await deleteSession(ctx.db, session.idHash);
    await audit(ctx.db, { action: "sign_in_refused", at: now, subjectUid: user.uid, origin, details: { reason: "locked" } });
    return { ok: false, reason: "locked" };
  }
  return { ok: true, session, sessionId, now };
}

/**
 * The end of a right second factor, in the caller's transaction: the
 * source's wrong second factors for the address are forgotten, the
 * half-signed-in session is replaced by a fully signed-in one under a new id
 * (recorded as password then `method`), and with `rememberBrowser` the
 * browser is remembered for 30 days.
 */
export async function finishSecondFactor(
  ctx: SignonContext,
  user: User,
  sessionId: string,
  input: { method: "otp" | "hwk"; rememberBrowser: boolean },
  origin: RequestOrigin,
  firstStep: Pick<WebSession, "authenticationMethods" | "upstream"> = { authenticationMethods: [], upstream: null },
): Promise<SecondFactorResult & { ok: true }> {
  const now = ctx.now();
  await clearSourceFailures(ctx.db, user.email, origin, "two_step_code");
  // The first step was a password, or the sign-in through the organisation's provider (with what it reported).
  const methods = firstStep.authenticationMethods.length > 0 || firstStep.upstream !== null ? firstStep.authenticationMethods : (["pwd"] as const);
  const newSessionId = await startSession(ctx, user, sessionId, origin, { methods: [...methods, input.method], upstream: firstStep.upstream });
  let rememberToken: string | null = null;
  if (input.rememberBrowser) {
    rememberToken = randomHex();
    await insertRememberedBrowser(ctx.db, {
      tokenHash: sha256Hex(rememberToken),
      userUid: user.uid,
      expiresAt: new Date(now.getTime() + rememberBrowserSeconds * 1000),
      createdAt: now,
    });
  }
  return { ok: true, user, sessionId: newSessionId, rememberToken };
}

/**
 * Completes a sign-in that waits for its 2-step code. A right code, not used
 * before, replaces the half-signed-in session with a fully signed-in one under
 * a new id (no fixation) and records the sign-in; with `rememberBrowser`, it
 * also remembers the browser for 30 days. Wrong and reused codes count as
 * failed sign-ins for the person's address from this source (S15): the
 * tenth from one source in an hour refuses that source for the address for
 * an hour (`refused`), and they count towards the lock of the account for
 * everyone. A refused source or a locked account ends the half-signed-in
 * session. A right password does not reset the count of wrong codes.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6238#section-5.2
 */
export async function completeSecondFactor(
  ctx: SignonContext,
  sessionId: string | undefined,
  input: { code: string; rememberBrowser: boolean },
  origin: RequestOrigin,
  onMailFailure: (error: unknown) => void = () => undefined,
): Promise<SecondFactorResult> {
  const opened = await openSecondFactorStep(ctx, sessionId, origin);
  if (!opened.ok) return opened;
  const { session, now } = opened;
  const { user } = session;
  const secret = user.otpEnabledAt === null ? null : openOtpSecret(ctx, user);
  if (secret === null) return { ok: false, reason: "no_session" };
  const code = normaliseOtpCode(input.code);
  const step = code === null ? null : matchingOtpStep(user, secret, code, now);

  const accepted = await ctx.db.transaction(async (tx) => {
    if (step === null || !(await acceptOtpStep(tx, user.uid, step, now))) return null;
    await audit(tx, { action: "two_step_verified", at: now, actorUid: user.uid, subjectUid: user.uid, origin });
    return finishSecondFactor({ ...ctx, db: tx }, user, opened.sessionId, { method: "otp", rememberBrowser: input.rememberBrowser }, origin, session);
  });
  if (accepted) return accepted;

  const reason = step === null ? "wrong_code" : "reused_code";
  const counted = await countSignInFailureFor(ctx, { email: user.email, kind: "two_step_code", origin, now }, onMailFailure);
  await audit(ctx.db, { action: "two_step_failed", at: now, subjectUid: user.uid, origin, details: { reason, failures: counted.failures } });
  if (counted.retryAfterSeconds !== null) {
    await deleteSession(ctx.db, session.idHash);
    return { ok: false, reason: "refused", retryAfterSeconds: counted.retryAfterSeconds };
  }
  return { ok: false, reason };
}
