import { holds, PERMISSIONS, type SignonCaller } from "../auth/caller.js";
import type { CompletionContext } from "../context.js";
import { linkSignonUser, type LearnerRow } from "../repositories/learners.js";
import { forbidden } from "./errors.js";

/** The learner record of the caller (C7), linked by Sign-on uid or on first sight by e-mail; null when there is none. */
export function callerLearner(ctx: CompletionContext, caller: SignonCaller): Promise<LearnerRow | null> {
  return linkSignonUser(ctx.db, { uid: caller.uid, email: caller.email });
}

/**
 * The username whose data a single-user read returns (C7): `username` when
 * the caller holds `staff` or `masquerade` or it is the caller's own, else
 * 403; without `username`, the caller's own (null when the caller has no
 * learner record).
 */
export async function effectiveUsername(ctx: CompletionContext, caller: SignonCaller, username: string | null): Promise<string | null> {
  if (username !== null && (holds(caller, PERMISSIONS.staff) || holds(caller, PERMISSIONS.masquerade))) return username;
  const own = await callerLearner(ctx, caller);
  if (username === null || username === own?.username) return own?.username ?? null;
  throw forbidden("You do not have permission to read another user's completion data.");
}

/** The `username` parameter, with an empty value treated as absent. */
export function usernameParam(value: string | undefined): string | null {
  return value === undefined || value === "" ? null : value;
}
