import { pushUserEmail } from "../pushes/push-credential.js";
import { pushesCommitted } from "../pushes/queue.js";
import { queueCurrentDetailsForEveryone, signEveryoneOut, type EveryoneSignedOut } from "../repositories/after-restore.js";
import type { Command } from "./output.js";

const followUpUsage = "signon restore follow-up [--sign-everyone-out] [--json]   (after the database was restored to an earlier point)";

/** What an operator runs once the database has been restored to an earlier point (docs/operations.md, "Backups and restores"). */
export const restoreCommands: Record<string, Command> = {
  "restore follow-up": {
    usage: followUpUsage,
    options: { "sign-everyone-out": { type: "boolean" } },
    async run(ctx, options) {
      const now = ctx.now();
      const signOut = options["sign-everyone-out"] === true;
      const outcome = await ctx.db.transaction(async (tx) => {
        const updates = await queueCurrentDetailsForEveryone(tx, now, pushUserEmail);
        const signedOut: EveryoneSignedOut | null = signOut ? await signEveryoneOut(tx, now, pushUserEmail) : null;
        return { updates, signedOut };
      });
      // A running Sign-on's push workers find the queued pushes at their next poll; this only wakes those in-process.
      pushesCommitted(ctx);
      const text = [`Queued ${outcome.updates} push(es) of each person's current details and permissions to the applications that know them.`];
      if (outcome.signedOut !== null) {
        const { sessions, accessTokens, refreshTokens, reauthPushes } = outcome.signedOut;
        text.push(
          `Signed everyone out: ended ${sessions} session(s), revoked ${accessTokens} access and ${refreshTokens} refresh token(s) (API users' tokens kept), ` +
            `queued ${reauthPushes} sign-out push(es) to the applications.`,
        );
      }
      return {
        json: {
          update_pushes: outcome.updates,
          signed_out:
            outcome.signedOut === null
              ? null
              : {
                  sessions: outcome.signedOut.sessions,
                  access_tokens: outcome.signedOut.accessTokens,
                  refresh_tokens: outcome.signedOut.refreshTokens,
                  reauth_pushes: outcome.signedOut.reauthPushes,
                },
        },
        text,
      };
    },
  },
};
