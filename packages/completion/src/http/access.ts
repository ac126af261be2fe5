import { holds, PERMISSIONS, type SignonCaller } from "../auth/caller.js";
import type { CompletionContext } from "../context.js";
import { findLearnerByUsername, linkSignonUser, type LearnerRow } from "../repositories/learners.js";
import { forbidden, notFound } from "./errors.js";

/** The learner record of the caller (C7), linked by Sign-on uid or on first sight by e-mail; null when there is none. */
export function callerLearner(ctx: CompletionContext, caller: SignonCaller): Promise<LearnerRow | null> {
  return linkSignonUser(ctx.db, { uid: caller.uid, email: caller.email });
}

/**
 * The learner whose data a single-user read returns: the caller's own record,
 * or, with `staff` or `masquerade`, any learner named by `username` (C7).
 * Another username without either permission: 403; an unknown one: 404.
 */
export async function effectiveLearner(
  ctx: CompletionContext,
  caller: SignonCaller,
  own: LearnerRow | null,
  username: string | null,
): Promise<LearnerRow | null> {
  if (username === null || username === own?.username) return own;
  if (!holds(caller, PERMISSIONS.staff) && !holds(caller, PERMISSIONS.masquerade)) {
    throw forbidden("You do not have permission to read another user's completion data.");
  }
  const learner = await findLearnerByUsername(ctx.db, username);
  if (!learner) throw notFound(`User not found: ${username}`);
  return learner;
}

/** The `username` parameter, with an empty value treated as absent. */
export function usernameParam(value: string | undefined): string | null {
  return value === undefined || value === "" ? null : value;
}
