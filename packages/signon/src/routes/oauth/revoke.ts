import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { authenticateClient } from "../../oauth/authenticate-client.js";
import { logClientAuthenticationFlood } from "./flood-log.js";
import { readClientCredentials } from "../../oauth/client-credentials.js";
import { InvalidRequestError } from "../../oauth/errors.js";
import { revokeToken } from "../../oauth/revoke-token.js";
import { clientCredentialFields, clientEndpointErrors } from "./schemas.js";

const RevokeBody = Type.Object(
  { token: Type.Optional(Type.String({ maxLength: 512 })), token_type_hint: Type.Optional(Type.String({ maxLength: 64 })), ...clientCredentialFields },
  { additionalProperties: Type.String({ maxLength: 2048 }) },
);

/** `POST /oauth/revoke` (RFC 7009): 200 with an empty body whether or not the token was known. */
const revokeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    "/oauth/revoke",
    { preValidation: requireFormBody, schema: { body: RevokeBody, response: { 200: Type.String({ maxLength: 0 }), ...clientEndpointErrors } } },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      const credentials = readClientCredentials({ authorization: request.headers.authorization, body: request.body });
      if (!request.body.token) throw new InvalidRequestError("token is required");
      const origin = requestOrigin(request);
      const application = await authenticateClient(app.signon, credentials, origin, logClientAuthenticationFlood(request.log));
      await revokeToken(app.signon, application, request.body.token, origin);
      return reply.code(200).send("");
    },
  );
};

export default revokeRoutes;
