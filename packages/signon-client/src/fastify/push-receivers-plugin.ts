import type { FastifyInstance } from "fastify";
import type { BearerTokenVerifier } from "../bearer/bearer-token-verifier.js";
import type { SignonUserJson } from "../user.js";
import { bearerTokenGuard } from "./guards.js";
import { receiverRoutes, USER_UPDATE_PERMISSION } from "./receiver-routes.js";

/** Options of {@link signonPushReceiversPlugin}. */
export interface SignonPushReceiversOptions {
  /**
   * The verifier of the service's API routes: it checks the push credential's
   * token, and each push drops the remembered answers about its user from it.
   */
  verifier: BearerTokenVerifier;
  /** Runs after a `PUT /users/:uid` was checked and the user's answers dropped (e.g. to update a copy of the user). */
  onUserUpdate?: (user: SignonUserJson) => unknown;
  /** Runs after a `POST /users/:uid/reauth` was checked and the user's answers dropped. */
  onReauth?: (uid: string) => unknown;
}

/**
 * Sign-on's push receivers for services that only take API requests (no
 * browser sign-in, no stores): `PUT /users/:uid` and `POST /users/:uid/reauth`
 * under the prefix it is registered with (gds-sso's is `/auth/gds/api`). A
 * push about a user drops every remembered bearer-token answer about them,
 * so a suspension or a revoked permission holds from the next request on
 * instead of after the cache time.
 *
 * @example
 * const verifier = createBearerTokenVerifier({ signonUrl });
 * await app.register(signonPushReceiversPlugin, { prefix: "/auth/gds/api", verifier });
 */
export async function signonPushReceiversPlugin(app: FastifyInstance, options: SignonPushReceiversOptions): Promise<void> {
  const { verifier } = options;
  // Registered without fastify-plugin: the receivers' error handler and validator stay inside this prefix.
  await receiverRoutes({
    guard: bearerTokenGuard((token) => verifier.verify(token), [USER_UPDATE_PERMISSION]),
    receiveUserUpdate: async (user) => {
      verifier.forgetUser(user.uid);
      await options.onUserUpdate?.(user);
    },
    receiveReauth: async (uid) => {
      verifier.forgetUser(uid);
      await options.onReauth?.(uid);
    },
  })(app);
}
