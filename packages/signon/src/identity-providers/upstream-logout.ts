import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { pushesCommitted } from "../pushes/queue.js";
import { deleteUpstreamSessions, findUserOfUpstreamSubject, type IdentityProvider } from "../repositories/identity-providers.js";
import { queuePushes } from "../repositories/push-deliveries.js";

export type UpstreamLogoutResult = { ok: true; sessionsEnded: number } | { ok: false; detail: string };

/**
 * Ends the Sign-on sessions a provider's logout names: every session through it of the person it knows as `subject`,
 * or those of one provider session (`sessionId`: OpenID Connect `sid`, SAML `SessionIndex`), or both together. Each
 * person's applications hear it as after a sign-out (a reauth push); each is an `upstream_logout` event.
 */
export async function endUpstreamSessions(
  ctx: SignonContext,
  provider: IdentityProvider,
  named: { subject: string | null; sessionId: string | null; by: string },
  origin: RequestOrigin,
): Promise<UpstreamLogoutResult> {
  const userUid = named.subject === null ? null : await findUserOfUpstreamSubject(ctx.db, provider.id, named.subject);
  // A subject nobody is linked to names no session, whatever else the message names.
  if (named.subject !== null && userUid === null) return { ok: true, sessionsEnded: 0 };
  const now = ctx.now();
  const ended = await ctx.db.transaction(async (tx) => {
    const found = await deleteUpstreamSessions(tx, provider.id, { userUid, upstreamSessionId: named.sessionId });
    for (const uid of new Set(found.map((session) => session.userUid).concat(userUid === null ? [] : [userUid]))) {
      const count = found.filter((session) => session.userUid === uid).length;
      await audit(tx, {
        action: "upstream_logout",
        at: now,
        subjectUid: uid,
        origin,
        details: { provider_id: provider.id, organisation_id: provider.organisationId, sessions_ended: count, by: named.by },
      });
      await queuePushes(tx, { userUid: uid, kinds: ["reauth"], targets: { applicationsOfUser: ctx.config.pushes.fanOut }, now });
    }
    return found.length;
  });
  pushesCommitted(ctx);
  return { ok: true, sessionsEnded: ended };
}

/** A logout message from a provider that was not acted on, as an event on the organisation's page. */
export async function refuseUpstreamLogout(ctx: SignonContext, provider: IdentityProvider, detail: string, origin: RequestOrigin): Promise<{ ok: false; detail: string }> {
  await audit(ctx.db, { action: "upstream_logout", at: ctx.now(), origin, details: { provider_id: provider.id, organisation_id: provider.organisationId, refused: detail } });
  return { ok: false, detail };
}
