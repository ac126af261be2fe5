import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { InvalidRequestError, InvalidTokenError } from "../oauth/errors.js";
import { readBearerToken } from "../oauth/bearer-token.js";
import { resolveAccessToken } from "../oauth/resolve-access-token.js";
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
 * token's application only (S12).
 */
const userJsonRoutes: FastifyPluginAsyncTypebox = async (app) => {
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
