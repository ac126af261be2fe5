import type { SignonContext } from "../context.js";
import { listSignInFailures, type SignInFailureRow } from "../repositories/sign-in-failures.js";
import { findUserWithOrganisation, type UserStatus } from "../repositories/user-search.js";
import type { User } from "../repositories/users.js";
import { normaliseEmail } from "./sign-in-limits.js";
import { hasSecondFactor, twoStepRequirement, type TwoStepRequirement } from "./two-step-mandate.js";
import { statusTags } from "./user-search.js";

/** What an administrator's page about one user shows. */
export interface UserDetails {
  user: User;
  organisationName: string | null;
  status: UserStatus[];
  /** Whether the S15 lock (after failed sign-ins from every source address together) holds now. */
  locked: boolean;
  /**
   * The failed sign-ins counted against the person's address that still
   * matter (window open or source refused), per source address and kind:
   * the causes of a lock, and the sources refused for the address.
   */
  failures: SignInFailureRow[];
  twoStepOn: boolean;
  /** Whether 2-step verification is required of the user now, why, and their exemption. */
  twoStepRequirement: TwoStepRequirement;
}

const uidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The user with this uid and their state, or `null` when the uid is malformed or unknown. */
export async function findUserDetails(ctx: SignonContext, uid: string): Promise<UserDetails | null> {
  if (!uidPattern.test(uid)) return null;
  const found = await findUserWithOrganisation(ctx.db, uid.toLowerCase());
  if (!found) return null;
  const { user } = found;
  const status = statusTags(ctx, { suspendedAt: user.suspendedAt, lockedAt: user.lockedAt, hasPassword: user.passwordHash !== null });
  const failures = await listSignInFailures(ctx.db, normaliseEmail(user.email), ctx.now());
  return {
    user,
    organisationName: found.organisationName,
    status,
    locked: status.includes("locked"),
    failures,
    twoStepOn: hasSecondFactor(user),
    twoStepRequirement: twoStepRequirement(ctx.config, user, found.organisationRequiresTwoStep ?? false, ctx.now()),
  };
}
