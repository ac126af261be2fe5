import { audit } from "../audit.js";
import type { SignonConfig } from "../config.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { Organisation } from "../repositories/organisations.js";
import {
  organisationRequiresTwoStep,
  updateOrganisationTwoStepRequired,
  updateUserTwoStepExemption,
  updateUserTwoStepRequired,
} from "../repositories/two-step-mandates.js";
import type { User } from "../repositories/users.js";

/** What can require a person to use 2-step verification. */
export type TwoStepRequirementSource = "role" | "organisation" | "person";

/** A person's 2-step requirement as it stands at one moment. */
export interface TwoStepRequirement {
  /** Everything that requires it, exemption or not, in the order role, organisation, person. */
  sources: TwoStepRequirementSource[];
  /** The exemption recorded for the person, whether or not it still applies. */
  exemption: { reason: string; until: Date; applies: boolean } | null;
  /** Whether the person must use 2-step verification now. */
  required: boolean;
}

type RequirementFields = Pick<User, "role" | "isApiUser" | "twoStepRequired" | "twoStepExemptionReason" | "twoStepExemptUntil">;

/**
 * Whether a person must use 2-step verification, and why. A role named in
 * `SIGNON_TWO_STEP_REQUIRED_ROLES` requires it whatever else; an
 * organisation's or the person's own requirement is lifted while a
 * superadmin's exemption lasts (until its end, exclusive). API users never
 * sign in, so nothing requires it of them.
 */
export function twoStepRequirement(config: Pick<SignonConfig, "twoStepRequiredRoles">, user: RequirementFields, organisationRequires: boolean, now: Date): TwoStepRequirement {
  const exemption =
    user.twoStepExemptionReason !== null && user.twoStepExemptUntil !== null
      ? { reason: user.twoStepExemptionReason, until: user.twoStepExemptUntil, applies: user.twoStepExemptUntil.getTime() > now.getTime() }
      : null;
  if (user.isApiUser) return { sources: [], exemption, required: false };
  const byRole = (config.twoStepRequiredRoles as readonly string[]).includes(user.role);
  const sources: TwoStepRequirementSource[] = [];
  if (byRole) sources.push("role");
  if (organisationRequires) sources.push("organisation");
  if (user.twoStepRequired) sources.push("person");
  const required = byRole || ((organisationRequires || user.twoStepRequired) && !(exemption?.applies ?? false));
  return { sources, exemption, required };
}

/** Whether the person has a second factor: an authenticator app set up, or at least one passkey. */
export function hasSecondFactor(user: Pick<User, "otpEnabledAt" | "passkeyCount">): boolean {
  return user.otpEnabledAt !== null || user.passkeyCount > 0;
}

/**
 * Whether the person must set up 2-step verification before they may do
 * anything else: it is required of them and they have no second factor (an
 * authenticator app or a passkey meets the requirement).
 */
export function mustSetUpTwoStep(
  config: Pick<SignonConfig, "twoStepRequiredRoles">,
  user: RequirementFields & Pick<User, "otpEnabledAt" | "passkeyCount">,
  organisationRequires: boolean,
  now: Date,
): boolean {
  return !hasSecondFactor(user) && twoStepRequirement(config, user, organisationRequires, now).required;
}

/** `mustSetUpTwoStep` for a user as stored, reading their organisation's requirement. */
export async function mustSetUpTwoStepNow(ctx: SignonContext, user: User): Promise<boolean> {
  if (hasSecondFactor(user) || user.isApiUser) return false;
  return mustSetUpTwoStep(ctx.config, user, await organisationRequiresTwoStep(ctx.db, user.organisationId), ctx.now());
}

/** Who changes a requirement, for the audit event. */
export interface MandateActor {
  uid: string;
  origin: RequestOrigin;
}

/**
 * Requires 2-step verification of one person, or stops requiring it
 * (audited as `two_step_required` or `two_step_requirement_removed`).
 * Returns whether anything changed. The caller checks that the actor may
 * manage the person.
 */
export async function setPersonTwoStepRequired(ctx: SignonContext, target: User, required: boolean, actor: MandateActor): Promise<boolean> {
  if (target.twoStepRequired === required) return false;
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    if (!(await updateUserTwoStepRequired(tx, target.uid, required, now))) return false;
    await audit(tx, {
      action: required ? "two_step_required" : "two_step_requirement_removed",
      at: now,
      actorUid: actor.uid,
      subjectUid: target.uid,
      origin: actor.origin,
    });
    return true;
  });
}

/**
 * Requires 2-step verification of every person of an organisation, or stops
 * requiring it (audited as `organisation_two_step_required` or
 * `organisation_two_step_requirement_removed`). Returns the organisation
 * afterwards and whether anything changed, or `null` when there is no such
 * organisation.
 */
export async function setOrganisationTwoStepRequired(
  ctx: SignonContext,
  organisation: Organisation,
  required: boolean,
  actor: MandateActor,
): Promise<{ organisation: Organisation; changed: boolean } | null> {
  if (organisation.twoStepRequired === required) return { organisation, changed: false };
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const updated = await updateOrganisationTwoStepRequired(tx, organisation.id, required);
    if (!updated) return null;
    await audit(tx, {
      action: required ? "organisation_two_step_required" : "organisation_two_step_requirement_removed",
      at: now,
      actorUid: actor.uid,
      origin: actor.origin,
      details: { organisation_id: organisation.id, slug: organisation.slug },
    });
    return { organisation: updated, changed: true };
  });
}

/** Longest exemption reason kept. */
export const exemptionReasonMaxLength = 500;

/** The fields of the exemption form as typed: the reason, and the day it ends as `YYYY-MM-DD`. */
export interface ExemptionInput {
  reason: string;
  endsOn: string;
}

export type ExemptionCheck = { ok: true; reason: string; until: Date } | { ok: false; errors: { reason?: string; ends_on?: string } };

/**
 * Checks an exemption as typed: a reason of 1 to 500 characters, and a day
 * after today (UTC) on which it ends; the exemption lasts until the start of
 * that day (UTC).
 */
export function checkExemption(input: ExemptionInput, now: Date): ExemptionCheck {
  const errors: { reason?: string; ends_on?: string } = {};
  const reason = input.reason.trim();
  if (reason === "") errors.reason = "Enter the reason for the exemption";
  else if (reason.length > exemptionReasonMaxLength) errors.reason = `Enter a reason of at most ${exemptionReasonMaxLength} characters`;
  const until = dayStart(input.endsOn.trim());
  if (until === null) errors.ends_on = "Enter the day the exemption ends as a date, such as 2027-01-31";
  else if (until.getTime() <= now.getTime()) errors.ends_on = "Enter a day after today";
  if (until === null || errors.reason !== undefined || errors.ends_on !== undefined) return { ok: false, errors };
  return { ok: true, reason, until };
}

/** The start (00:00 UTC) of a day written `YYYY-MM-DD`, or `null` when it is not a real day. */
function dayStart(value: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return null;
  const date = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) return null;
  return date;
}

/**
 * Why a person cannot be exempted, or `null` when they can: a role's
 * requirement is the installation's rule, which no exemption lifts.
 */
export function exemptionRefusal(config: Pick<SignonConfig, "twoStepRequiredRoles">, target: Pick<User, "role" | "isApiUser">): string | null {
  if (target.isApiUser) return "API users do not sign in, so nothing requires 2-step verification of them";
  if ((config.twoStepRequiredRoles as readonly string[]).includes(target.role)) {
    return "Everyone with this role must use 2-step verification (SIGNON_TWO_STEP_REQUIRED_ROLES); an exemption cannot lift that";
  }
  return null;
}

/**
 * Exempts a person from their organisation's and their own 2-step
 * requirement until `until` (audited as `two_step_exempted`, with the reason
 * and the end). A new exemption replaces the one recorded. The caller checks
 * that the actor is a superadmin who may manage the person, and
 * `exemptionRefusal`.
 */
export async function exemptFromTwoStep(ctx: SignonContext, target: User, exemption: { reason: string; until: Date }, actor: MandateActor): Promise<void> {
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
    if (!(await updateUserTwoStepExemption(tx, target.uid, exemption, now))) return;
    await audit(tx, {
      action: "two_step_exempted",
      at: now,
      actorUid: actor.uid,
      subjectUid: target.uid,
      origin: actor.origin,
      details: { reason: exemption.reason, until: exemption.until.toISOString() },
    });
  });
}

/** Removes a person's exemption (audited as `two_step_exemption_removed`). Returns whether there was one. */
export async function removeTwoStepExemption(ctx: SignonContext, target: User, actor: MandateActor): Promise<boolean> {
  if (target.twoStepExemptionReason === null) return false;
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    if (!(await updateUserTwoStepExemption(tx, target.uid, null, now))) return false;
    await audit(tx, { action: "two_step_exemption_removed", at: now, actorUid: actor.uid, subjectUid: target.uid, origin: actor.origin });
    return true;
  });
}
