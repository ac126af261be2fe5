import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { authenticateClient } from "../../oauth/authenticate-client.js";
import { logClientAuthenticationFlood } from "./flood-log.js";
import { readClientCredentials } from "../../oauth/client-credentials.js";
import { InvalidRequestError } from "../../oauth/errors.js";
import { introspectToken } from "../../oauth/introspect-token.js";
import { clientCredentialFields, clientEndpointErrors } from "./schemas.js";

const IntrospectBody = Type.Object(
  { token: Type.Optional(Type.String({ maxLength: 512 })), token_type_hint: Type.Optional(Type.String({ maxLength: 64 })), ...clientCredentialFields },
  { additionalProperties: Type.String({ maxLength: 2048 }) },
);

const IntrospectionResponse = Type.Union([
  Type.Object({
    active: Type.Literal(true),
    token_type: Type.Literal("Bearer"),
    client_id: Type.String(),
    sub: Type.String(),
    username: Type.String(),
    exp: Type.Integer(),
    iat: Type.Integer(),
  }),
  Type.Object({ active: Type.Literal(false) }),
]);

/** `POST /oauth/introspect` (RFC 7662): the caller authenticates as a client (S1). */
const introspectRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    "/oauth/introspect",
    { preValidation: requireFormBody, schema: { body: IntrospectBody, response: { 200: IntrospectionResponse, ...clientEndpointErrors } } },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      const credentials = readClientCredentials({ authorization: request.headers.authorization, body: request.body });
      if (!request.body.token) throw new InvalidRequestError("token is required");
      const application = await authenticateClient(app.signon, credentials, requestOrigin(request), logClientAuthenticationFlood(request.log));
      return introspectToken(app.signon, application, request.body.token);
    },
  );
};

export default introspectRoutes;
