import type { BearerTokenVerifier } from "@tessera/signon-client";
import { signonPushReceiversPlugin } from "@tessera/signon-client/fastify";
import type { FastifyInstance } from "fastify";

/** Where Sign-on's pushes arrive: the push address the `completion` application is registered with ends here. */
export const SIGNON_PUSH_PREFIX = "/auth/gds/api";

/**
 * Sign-on's push receivers (S13), `PUT /auth/gds/api/users/:uid` and
 * `POST /auth/gds/api/users/:uid/reauth`, from `@tessera/signon-client`. The
 * service keeps no copy of Sign-on's users: a push drops the remembered
 * `/user.json` answers about its user from `verifier` (the one that resolves
 * callers), so a suspension or a revoked permission holds from that user's
 * next request instead of after `COMPLETION_CALLER_CACHE_SECONDS`.
 */
export async function registerSignonPushes(app: FastifyInstance, verifier: BearerTokenVerifier): Promise<void> {
  await app.register(signonPushReceiversPlugin, {
    prefix: SIGNON_PUSH_PREFIX,
    verifier,
    onUserUpdate: (user) => app.log.info({ uid: user.uid }, "Sign-on pushed a user update: remembered token answers dropped"),
    onReauth: (uid) => app.log.info({ uid }, "Sign-on pushed a reauth: remembered token answers dropped"),
  });
}
