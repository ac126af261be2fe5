import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { startSession } from "../accounts/sessions.js";
import { needsSecondFactor } from "../accounts/two-step-sign-in.js";
import { mustSetUpTwoStepNow } from "../accounts/two-step-mandate.js";
import type { IdentityProvider } from "../repositories/identity-providers.js";
import { findUserByEmail } from "../repositories/users.js";
import { resolveUpstreamPerson, type UpstreamPerson, type UpstreamRefusal } from "./upstream-person.js";

/** What the browser does next after a provider's answer was accepted. */
export type UpstreamSignedIn = { ok: true; sessionId: string; next: "return" | "second_factor" | "set_up_two_step"; returnTo: string };

/**
 * Records a refused sign-in through a provider where the organisation's administrators read it: with the address
 * typed on the sign-in page, and its account as the subject when one has it.
 */
export async function recordUpstreamRefusal(
  ctx: SignonContext,
  provider: IdentityProvider | null,
  refusal: { reason: string; detail?: string; userUid?: string | null; email?: string | undefined },
  origin: RequestOrigin,
): Promise<void> {
  // An answer that names no waiting sign-in names no organisation either: anyone can send one, so it is not stored.
  if (provider === null) return;
  const subjectUid = refusal.userUid ?? (refusal.email === undefined ? null : ((await findUserByEmail(ctx.db, refusal.email))?.uid ?? null));
  await audit(ctx.db, {
    action: "upstream_sign_in_refused",
    at: ctx.now(),
    subjectUid,
    origin,
    details: {
      reason: refusal.reason,
      ...(refusal.email === undefined ? {} : { email: refusal.email }),
      ...(refusal.detail === undefined ? {} : { detail: refusal.detail }),
      provider_id: provider.id,
      organisation_id: provider.organisationId,
    },
  });
}

/**
 * Signs in the person a provider vouched for: their account (see `resolveUpstreamPerson`), then a new session that
 * records the provider's methods (`amr`) and session. A second factor the provider showed meets Sign-on's 2-step
 * requirement; otherwise a person with 2-step verification is asked for it, as after a password.
 */
export async function completeUpstreamSignIn(
  ctx: SignonContext,
  provider: IdentityProvider,
  answer: { person: UpstreamPerson; returnTo: string },
  browser: { previousSessionId: string | undefined; rememberToken: string | undefined },
  origin: RequestOrigin,
): Promise<UpstreamSignedIn | { ok: false; reason: UpstreamRefusal }> {
  const resolved = await resolveUpstreamPerson(ctx, provider, answer.person, origin);
  if (!resolved.ok) {
    await recordUpstreamRefusal(ctx, provider, { reason: resolved.reason, userUid: resolved.userUid }, origin);
    return { ok: false, reason: resolved.reason };
  }
  const { user, methods, secondFactor } = resolved;
  const awaitingSecondFactor = !secondFactor && (await needsSecondFactor(ctx, user, browser.rememberToken));
  const sessionId = await startSession(ctx, user, browser.previousSessionId, origin, {
    awaitingSecondFactor,
    methods,
    upstream: { providerId: provider.id, sessionId: answer.person.sessionId },
  });
  const next = awaitingSecondFactor ? "second_factor" : !secondFactor && (await mustSetUpTwoStepNow(ctx, user)) ? "set_up_two_step" : "return";
  return { ok: true, sessionId, next, returnTo: answer.returnTo };
}
