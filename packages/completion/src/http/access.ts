import { holds, PERMISSIONS, type SignonCaller } from "../auth/caller.js";
import type { CompletionContext } from "../context.js";
import { findLearnerBySignonUid, linkSignonUser, type LearnerRow } from "../repositories/learners.js";
import { forbidden } from "./errors.js";

/**
 * The learner record of the caller (C7), linked by Sign-on uid or on first
 * sight by e-mail; null when there is none. A link already made is read
 * where the context reads; one to make is made (or found, when a replica has
 * not replayed it yet) on the primary.
 */
export async function callerLearner(ctx: CompletionContext, caller: SignonCaller): Promise<LearnerRow | null> {
  if (ctx.db !== ctx.primary) {
    const linked = await findLearnerBySignonUid(ctx.db, caller.uid);
    if (linked !== null) return linked;
  }
  return linkSignonUser(ctx.primary, { uid: caller.uid, email: caller.email });
}

/**
 * Whether `username` names the caller's own learner record: compared without
 * regard to case, as Open edX's completion aggregator compares a request's
 * username with the caller's, so a client that spells the caller's name in
 * another case still reads its own data.
 */
export function isOwnUsername(own: LearnerRow | null, username: string): own is LearnerRow {
  return own !== null && own.username.toLowerCase() === username.toLowerCase();
}

/**
 * The username whose data a single-user read returns (C7): `username` as
 * given when the caller holds `staff` or `masquerade`; the caller's own, as
 * stored, when `username` is absent or names the caller in any case; else
 * 403. Null when the caller has no learner record and passed no `username`.
 */
export async function effectiveUsername(ctx: CompletionContext, caller: SignonCaller, username: string | null): Promise<string | null> {
  if (username !== null && (holds(caller, PERMISSIONS.staff) || holds(caller, PERMISSIONS.masquerade))) return username;
  const own = await callerLearner(ctx, caller);
  if (username === null) return own?.username ?? null;
  if (isOwnUsername(own, username)) return own.username;
  throw forbidden("You do not have permission to read another user's completion data.");
}

/** The `username` parameter, with an empty value treated as absent. */
export function usernameParam(value: string | undefined): string | null {
  return value === undefined || value === "" ? null : value;
}
