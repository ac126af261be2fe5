import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { assertFormBody } from "../../http/form-content-type.js";
import { readBearerToken } from "../../oauth/bearer-token.js";
import { oidcPaths, openIdConfiguration } from "../../oidc/discovery.js";
import { publishedKeys } from "../../oidc/signing-keys.js";
import { readUserInfo } from "../../oidc/userinfo.js";
import { OAuthErrorBody } from "../oauth/schemas.js";

const Parameters = Type.Record(Type.String(), Type.Union([Type.String({ maxLength: 2048 }), Type.Array(Type.String({ maxLength: 2048 }))]), {
  maxProperties: 16,
});

const UserInfo = Type.Object({
  sub: Type.String(),
  name: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  email_verified: Type.Optional(Type.Boolean()),
  permissions: Type.Array(Type.String()),
});

const userInfoErrors = { 400: OAuthErrorBody, 401: OAuthErrorBody, 403: OAuthErrorBody };

/**
 * OpenID Connect: `GET /.well-known/openid-configuration` (Discovery 1.0),
 * the signing keys at `jwks_uri`, and `GET`/`POST /userinfo` (Core §5.3).
 */
const oidcRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/.well-known/openid-configuration", async (_request, reply) => {
    reply.header("cache-control", "public, max-age=300");
    return openIdConfiguration(app.signon.config.publicUrl);
  });

  app.get(oidcPaths.jwks, async (_request, reply) => {
    // Short: a client that meets a new key id fetches again anyway.
    reply.header("cache-control", "public, max-age=60");
    reply.type("application/jwk-set+json; charset=utf-8");
    return { keys: await publishedKeys(app.signon) };
  });

  const userinfo = async (request: FastifyRequest, reply: FastifyReply, parameters: Record<string, string | string[]>) => {
    reply.header("cache-control", "no-store");
    const token = readBearerToken(request.headers.authorization, parameters.access_token);
    return readUserInfo(app.signon, token);
  };
  app.get(oidcPaths.userinfo, { schema: { querystring: Parameters, response: { 200: UserInfo, ...userInfoErrors } } }, (request, reply) =>
    userinfo(request, reply, request.query),
  );
  app.post(
    oidcPaths.userinfo,
    {
      // A body is optional (the token usually comes in the Authorization header, Core §5.3.1); when there is one, it is a form.
      preValidation: async (request) => {
        if (request.body !== undefined || request.headers["content-type"] !== undefined) assertFormBody(request);
        else request.body = {};
      },
      schema: { body: Parameters, response: { 200: UserInfo, ...userInfoErrors } },
    },
    (request, reply) => userinfo(request, reply, request.body),
  );
};

export default oidcRoutes;
