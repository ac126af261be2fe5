import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { InvalidRequestError, InvalidTokenError } from "../oauth/errors.js";
import { readBearerToken } from "../oauth/bearer-token.js";
import { resolveAccessToken } from "../oauth/resolve-access-token.js";
import { SyncThrottle, syncIntervalSeconds } from "../oauth/sync-throttle.js";
import { recordSync } from "../repositories/user-application-syncs.js";
import { OAuthErrorBody } from "./oauth/schemas.js";

const UserJsonQuery = Type.Record(Type.String(), Type.Union([Type.String({ maxLength: 512 }), Type.Array(Type.String())]), {
  maxProperties: 16,
});

const UserJson = Type.Object({
  user: Type.Object({
    uid: Type.String(),
    name: Type.String(),
    email: Type.String(),
    permissions: Type.Array(Type.String()),
    organisation_slug: Type.Union([Type.String(), Type.Null()]),
    organisation_content_id: Type.Union([Type.String(), Type.Null()]),
    disabled: Type.Boolean(),
  }),
});

/**
 * `GET /user.json` (S11): the token's user with their permissions on the
 * token's application only (S12). It also records that the application has
 * the user's state (`user_application_syncs`), at most once a minute per
 * (user, application) and process, so the endpoint stays a read.
 */
const userJsonRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const syncs = new SyncThrottle(syncIntervalSeconds * 1000);
  app.get(
    "/user.json",
    { schema: { querystring: UserJsonQuery, response: { 200: UserJson, 400: OAuthErrorBody, 401: OAuthErrorBody } } },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      const token = readBearerToken(request.headers.authorization, request.query.access_token);
      const clientId = request.query.client_id;
      if (Array.isArray(clientId)) throw new InvalidRequestError("client_id is repeated");
      const resolved = await resolveAccessToken(app.signon, token);
      if (!resolved || (clientId !== undefined && clientId !== resolved.application.clientId)) {
        throw new InvalidTokenError("The access token is not valid");
      }
      const { user } = resolved;
      const now = app.signon.now();
      if (syncs.due(`${user.uid} ${resolved.application.id}`, now.getTime())) {
        try {
          await recordSync(app.signon.db, { userUid: user.uid, applicationId: resolved.application.id, at: now, by: "user_json", minimumGapSeconds: syncIntervalSeconds });
        } catch (error) {
          // The answer does not depend on the record; the next call after the interval tries again.
          request.log.warn({ err: error }, "user.json: could not record the sync");
        }
      }
      return {
        user: {
          uid: user.uid,
          name: user.name,
          email: user.email,
          permissions: resolved.permissions,
          organisation_slug: user.organisationSlug,
          organisation_content_id: user.organisationContentId,
          disabled: user.suspendedAt !== null,
        },
      };
    },
  );
};

export default userJsonRoutes;
