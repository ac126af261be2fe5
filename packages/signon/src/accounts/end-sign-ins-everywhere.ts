import { audit } from "../audit.js";
import type { RequestOrigin } from "../context.js";
import type { SignonDatabase } from "../db/database.js";
import { listApplicationsPushedAboutUser, queuePushes, type PushFanOut } from "../repositories/push-deliveries.js";
import { deleteOtherSessionsOfUser, deleteSessionsOfUser } from "../repositories/sessions.js";
import { revokeTokensOfUser } from "../repositories/user-token-revocation.js";

/** Why every sign-in of a person ended (S18): a change of what proves who they are. */
export type CredentialChangeCause = "password_changed" | "password_reset" | "email_changed" | "two_step_reset";

/**
 * After a change of a person's credentials (S18), inside the transaction of
 * that change: revokes every access and refresh token they hold, for every
 * application; queues a reauth push (S13) to each
 * application that has issued them a token; ends every Sign-on session of theirs
 * but `keepSessionIdHash` (the browser that made the change), and audits the
 * bulk revocation with its count and cause. API users are left alone: their
 * pre-issued tokens are revoked only explicitly (S17).
 *
 * The caller calls `pushesCommitted` once the transaction has committed.
 */
export async function endSignInsEverywhere(
  tx: SignonDatabase,
  change: {
    user: { uid: string; isApiUser: boolean };
    cause: CredentialChangeCause;
    now: Date;
    /** Which applications are told to sign them out: `SIGNON_PUSH_FAN_OUT`. */
    fanOut: PushFanOut;
    keepSessionIdHash?: string | null | undefined;
    actorUid?: string | null | undefined;
    origin?: RequestOrigin | null | undefined;
  },
): Promise<void> {
  const { user, now } = change;
  if (user.isApiUser) return;
  if (change.keepSessionIdHash) await deleteOtherSessionsOfUser(tx, user.uid, change.keepSessionIdHash);
  else await deleteSessionsOfUser(tx, user.uid);
  const revoked = await revokeTokensOfUser(tx, user.uid, now);
  // The event names the applications told, by the rule the reauth pushes are queued by.
  const told = await listApplicationsPushedAboutUser(tx, user.uid, change.fanOut);
  await queuePushes(tx, { userUid: user.uid, kinds: ["reauth"], targets: { applicationsOfUser: change.fanOut }, now });
  await audit(tx, {
    action: "sign_in_tokens_revoked",
    at: now,
    actorUid: change.actorUid ?? null,
    subjectUid: user.uid,
    origin: change.origin ?? null,
    details: {
      cause: change.cause,
      tokens: revoked.accessTokens + revoked.refreshTokens,
      access_tokens: revoked.accessTokens,
      refresh_tokens: revoked.refreshTokens,
      applications: revoked.applicationIds.length,
      told,
      fan_out: change.fanOut,
    },
  });
}
