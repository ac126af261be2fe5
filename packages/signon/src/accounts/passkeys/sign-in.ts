import { generateAuthenticationOptions, verifyAuthenticationResponse, type PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { audit } from "../../audit.js";
import type { RequestOrigin, SignonContext } from "../../context.js";
import {
  deletePasskeyChallengesOfBinding,
  findPasskeyByCredentialId,
  insertPasskeyChallenge,
  listPasskeysOfUser,
  recordPasskeyUse,
  takePasskeyChallenge,
  type Passkey,
  type PasskeyChallenge,
  type PasskeyChallengePurpose,
} from "../../repositories/passkeys.js";
import { deleteSession } from "../../repositories/sessions.js";
import { providerOfAddress } from "../../repositories/identity-providers.js";
import { findUserByUid, type User } from "../../repositories/users.js";
import { randomHex, sha256Hex } from "../../security/random.js";
import { recordFailure, secondsUntilAllowed, signInPerIpLimit, type FailureLimit } from "../../security/failure-limit.js";
import { resolveWebSession, startSession } from "../sessions.js";
import { clearSourceFailures, countSignInFailureFor, isLocked, secondsUntilSignInAllowed } from "../sign-in-limits.js";
import { finishSecondFactor, openSecondFactorStep, type SecondFactorResult } from "../two-step-sign-in.js";
import { parseAuthenticationResponse } from "./browser-response.js";
import { uidOfUserHandle } from "./registration.js";
import { ceremonySeconds, relyingParty } from "./relying-party.js";

/** Passwordless challenges handed out per source address: past this, the source waits (a challenge is a row stored). */
export const passwordlessChallengesPerIp: FailureLimit = { name: "passkey-challenge-ip", maxFailures: 60, windowSeconds: 600 };

/** Why a passkey's response was refused, as audited. */
export type PasskeyRefusal = "malformed" | "unknown_challenge" | "unknown_passkey" | "other_users_passkey" | "not_verified" | "counter_went_back";

async function storeChallenge(
  ctx: SignonContext,
  options: PublicKeyCredentialRequestOptionsJSON,
  purpose: PasskeyChallengePurpose,
  owner: { userUid: string | null; bindingHash: string },
): Promise<void> {
  const now = ctx.now();
  await insertPasskeyChallenge(
    ctx.db,
    {
      challenge: options.challenge,
      purpose,
      userUid: owner.userUid,
      sessionHash: owner.bindingHash,
      expiresAt: new Date(now.getTime() + ceremonySeconds * 1000),
    },
    now,
  );
}

const browserBindingPattern = /^[0-9a-f]{64}$/;

/** Whether a cookie value has the shape of a binding we hand out (so that nothing else is looked up). */
function isBrowserBinding(value: string | undefined): value is string {
  return value !== undefined && browserBindingPattern.test(value);
}

/** The digest a passwordless challenge is stored under (apart from session digests, which share the column). */
function passwordlessBindingHash(browserBinding: string): string {
  return sha256Hex(`passwordless:${browserBinding}`);
}

/**
 * Options for `navigator.credentials.get()` as the second factor of a
 * half-signed-in session: the person's passkeys allowed, user verification
 * preferred (the password was the first factor), and a challenge bound to
 * the person and the session. `null` when the session does not wait for a
 * second factor or the person has no passkey.
 */
export async function beginPasskeySecondFactor(ctx: SignonContext, sessionId: string | undefined): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
  const session = await resolveWebSession(ctx, sessionId);
  if (!session || !session.awaitingSecondFactor) return null;
  const passkeys = await listPasskeysOfUser(ctx.db, session.user.uid);
  if (passkeys.length === 0) return null;
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(ctx.config).id,
    allowCredentials: passkeys.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
    userVerification: "preferred",
    timeout: ceremonySeconds * 1000,
  });
  await storeChallenge(ctx, options, "second_factor", { userUid: session.user.uid, bindingHash: session.idHash });
  return options;
}

/**
 * Options for a sign-in with a passkey alone: no credentials listed (the
 * authenticator offers its discoverable ones), user verification required,
 * since the passkey stands for both factors. The challenge is bound to the
 * asking browser by `browserBinding`, a random value the caller keeps in an
 * HttpOnly cookie: the one the browser sent when it has the right shape
 * (several tabs may sign in at once), else a new one. Only its digest is
 * stored. A source address gets at most `passwordlessChallengesPerIp`
 * challenges in its window (`retryAfterSeconds`).
 */
export async function beginPasswordlessSignIn(
  ctx: SignonContext,
  origin: RequestOrigin,
  browserBinding: string | undefined,
): Promise<{ ok: true; options: PublicKeyCredentialRequestOptionsJSON; browserBinding: string } | { ok: false; retryAfterSeconds: number }> {
  const now = ctx.now();
  const ipKeys = [origin.ip ?? "unknown"];
  const wait = (await secondsUntilAllowed(ctx.db, signInPerIpLimit, ipKeys, now)) ?? (await recordFailure(ctx.db, passwordlessChallengesPerIp, ipKeys, now));
  if (wait !== null) return { ok: false, retryAfterSeconds: wait };
  const options = await generateAuthenticationOptions({ rpID: relyingParty(ctx.config).id, userVerification: "required", timeout: ceremonySeconds * 1000 });
  const binding = isBrowserBinding(browserBinding) ? browserBinding : randomHex();
  await storeChallenge(ctx, options, "passwordless", { userUid: null, bindingHash: passwordlessBindingHash(binding) });
  return { ok: true, options, browserBinding: binding };
}

/**
 * Verifies an assertion from `passkey` answering `challenge`: origin, RP ID,
 * type, user presence (and verification when `requireUserVerification`),
 * signature, and a counter that went up. The new counter is stored in the
 * same statement that checks it, so of two identical responses only one
 * passes.
 *
 * @see https://www.w3.org/TR/webauthn-3/#sctn-verifying-assertion
 */
async function verifyAssertion(
  ctx: SignonContext,
  passkey: Passkey,
  response: Parameters<typeof verifyAuthenticationResponse>[0]["response"],
  challenge: PasskeyChallenge,
  requireUserVerification: boolean,
): Promise<PasskeyRefusal | null> {
  const rp = relyingParty(ctx.config);
  let newCounter: number;
  try {
    const verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: passkey.credentialId, publicKey: new Uint8Array(Buffer.from(passkey.publicKey, "base64url")), counter: passkey.signCount, transports: passkey.transports },
      requireUserVerification,
    });
    if (!verified.verified) return "not_verified";
    newCounter = verified.authenticationInfo.newCounter;
  } catch (error) {
    // The library throws for every failed check; a counter that did not go up says the authenticator may have been cloned.
    return error instanceof Error && /counter value/i.test(error.message) ? "counter_went_back" : "not_verified";
  }
  return (await recordPasskeyUse(ctx.db, passkey.id, newCounter, ctx.now())) ? null : "counter_went_back";
}

/**
 * Completes a sign-in that waits for its second factor with a passkey
 * instead of a code. The challenge must be the one handed to this session;
 * the passkey must be the person's own. A refusal counts as a wrong 2-step
 * code (S15: the same limits, the same lock) and is audited as
 * `passkey_failed` with its reason; success as `passkey_verified`, and the
 * session is recorded as signed in with a password and a passkey.
 */
export async function completeSecondFactorWithPasskey(
  ctx: SignonContext,
  sessionId: string | undefined,
  input: { response: string; rememberBrowser: boolean },
  origin: RequestOrigin,
  onMailFailure: (error: unknown) => void = () => undefined,
): Promise<SecondFactorResult | { ok: false; reason: "malformed" | "refused_passkey" }> {
  const opened = await openSecondFactorStep(ctx, sessionId, origin);
  if (!opened.ok) return opened;
  const { session, now } = opened;
  const { user } = session;
  const parsed = parseAuthenticationResponse(input.response);
  let refusal: PasskeyRefusal | null = null;
  let passkey: Passkey | null = null;
  if (parsed === null) refusal = "malformed";
  else {
    const challenge = await takePasskeyChallenge(ctx.db, parsed.challenge, "second_factor", session.idHash, now);
    passkey = await findPasskeyByCredentialId(ctx.db, parsed.response.id);
    if (challenge === null || challenge.userUid !== user.uid) refusal = "unknown_challenge";
    else if (passkey === null) refusal = "unknown_passkey";
    else if (passkey.userUid !== user.uid) refusal = "other_users_passkey";
    else refusal = await verifyAssertion(ctx, passkey, parsed.response, challenge, false);
  }
  if (refusal === null && passkey !== null) {
    const used = passkey;
    return ctx.db.transaction(async (tx) => {
      await audit(tx, { action: "passkey_verified", at: now, actorUid: user.uid, subjectUid: user.uid, origin, details: { name: used.name, passkey_id: used.id } });
      return finishSecondFactor({ ...ctx, db: tx }, user, opened.sessionId, { method: "hwk", rememberBrowser: input.rememberBrowser }, origin, opened.session);
    });
  }
  const counted = await countSignInFailureFor(ctx, { email: user.email, kind: "two_step_code", origin, now }, onMailFailure);
  const ownPasskey = passkey !== null && passkey.userUid === user.uid ? { name: passkey.name, passkey_id: passkey.id } : {};
  await audit(ctx.db, { action: "passkey_failed", at: now, subjectUid: user.uid, origin, details: { reason: refusal, failures: counted.failures, ...ownPasskey } });
  if (counted.retryAfterSeconds !== null) {
    await deleteSession(ctx.db, session.idHash);
    return { ok: false, reason: "refused", retryAfterSeconds: counted.retryAfterSeconds };
  }
  return { ok: false, reason: refusal === "malformed" ? "malformed" : "refused_passkey" };
}

export type PasswordlessResult =
  | { ok: true; user: User; sessionId: string }
  | { ok: false; reason: "malformed" | "invalid" | "suspended" | "new_password_required" | "through_provider" }
  | { ok: false; reason: "refused" | "rate_limited"; retryAfterSeconds: number };

/**
 * Signs a person in with a passkey alone (user verification required): the
 * passkey names the person (its user handle must match its owner), and the
 * challenge it answers must be one handed to this browser
 * (`browserBinding`, its cookie), unused and unexpired. Every
 * refusal counts under the source address (the per-IP sign-in limit) and,
 * once the person is known, as a failed sign-in for their address (S15, the
 * limits of wrong passwords and the lock); a source refused for the address,
 * or a locked account, gets the same answer as a wrong passkey. A suspended
 * account, or one that must choose a new password, is refused. Success
 * starts a fully signed-in session recorded as signed in with a passkey
 * (`hwk`), audited as `passkey_verified` and `sign_in`.
 */
export async function signInWithPasskey(
  ctx: SignonContext,
  input: { response: string; browserBinding: string | undefined },
  previousSessionId: string | undefined,
  origin: RequestOrigin,
  onMailFailure: (error: unknown) => void = () => undefined,
): Promise<PasswordlessResult> {
  const now = ctx.now();
  const ipKeys = origin.ip ? [origin.ip] : [];
  const wait = await secondsUntilAllowed(ctx.db, signInPerIpLimit, ipKeys, now);
  if (wait !== null) return { ok: false, reason: "rate_limited", retryAfterSeconds: wait };
  const parsed = parseAuthenticationResponse(input.response);
  if (parsed === null) {
    await recordFailure(ctx.db, signInPerIpLimit, ipKeys, now);
    return { ok: false, reason: "malformed" };
  }
  const bindingHash = isBrowserBinding(input.browserBinding) ? passwordlessBindingHash(input.browserBinding) : null;
  const challenge = bindingHash === null ? null : await takePasskeyChallenge(ctx.db, parsed.challenge, "passwordless", bindingHash, now);
  const passkey = await findPasskeyByCredentialId(ctx.db, parsed.response.id);
  const user = passkey === null ? null : await findUserByUid(ctx.db, passkey.userUid);
  let refusal: PasskeyRefusal | "locked" | null = null;
  if (challenge === null) refusal = "unknown_challenge";
  else if (passkey === null || user === null || user.isApiUser) refusal = "unknown_passkey";
  else if (uidOfUserHandle(parsed.response.response.userHandle) !== user.uid) refusal = "other_users_passkey";
  else {
    const refusedFor = await secondsUntilSignInAllowed(ctx, user.email, origin, now);
    if (refusedFor !== null) return { ok: false, reason: "refused", retryAfterSeconds: refusedFor };
    refusal = isLocked(user, now) ? "locked" : await verifyAssertion(ctx, passkey, parsed.response, challenge, true);
  }

  if (refusal !== null || user === null || passkey === null) {
    await recordFailure(ctx.db, signInPerIpLimit, ipKeys, now);
    await audit(ctx.db, {
      action: refusal === "locked" ? "sign_in_refused" : "sign_in_failed",
      at: now,
      subjectUid: user?.uid ?? null,
      origin,
      details: { reason: refusal, method: "passkey" },
    });
    if (user !== null) await countSignInFailureFor(ctx, { email: user.email, kind: "password", origin, now }, onMailFailure);
    return { ok: false, reason: "invalid" };
  }
  if (user.suspendedAt !== null) {
    await audit(ctx.db, { action: "sign_in_refused", at: now, subjectUid: user.uid, origin, details: { reason: "suspended", method: "passkey" } });
    return { ok: false, reason: "suspended" };
  }
  if (user.newPasswordRequired) {
    await audit(ctx.db, { action: "sign_in_refused", at: now, subjectUid: user.uid, origin, details: { reason: "new_password_required", method: "passkey" } });
    return { ok: false, reason: "new_password_required" };
  }
  // The organisation's own provider signs its people in: a passkey is then a second factor only, so that a leaver
  // the provider disabled cannot come back with one.
  if ((await providerOfAddress(ctx.db, user.email.toLowerCase())) !== null) {
    await audit(ctx.db, { action: "sign_in_refused", at: now, subjectUid: user.uid, origin, details: { reason: "through_provider", method: "passkey" } });
    return { ok: false, reason: "through_provider" };
  }
  const sessionId = await ctx.db.transaction(async (tx) => {
    await clearSourceFailures(tx, user.email, origin, "password");
    if (bindingHash !== null) await deletePasskeyChallengesOfBinding(tx, bindingHash);
    await audit(tx, { action: "passkey_verified", at: now, actorUid: user.uid, subjectUid: user.uid, origin, details: { name: passkey.name, passkey_id: passkey.id } });
    return startSession({ ...ctx, db: tx }, user, previousSessionId, origin, { methods: ["hwk"] });
  });
  return { ok: true, user, sessionId };
}
