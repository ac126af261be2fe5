import { authorizationServerMetadata } from "../../oauth/metadata.js";
import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";

const Metadata = Type.Object({
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  revocation_endpoint: Type.String(),
  introspection_endpoint: Type.String(),
  userinfo_endpoint: Type.String(),
  response_types_supported: Type.Array(Type.String()),
  grant_types_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
  revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
  introspection_endpoint_auth_methods_supported: Type.Array(Type.String()),
  code_challenge_methods_supported: Type.Array(Type.String()),
  authorization_response_iss_parameter_supported: Type.Boolean(),
});

/**
 * `GET /.well-known/oauth-authorization-server`: RFC 8414 metadata.
 *
 * @see https://www.rfc-editor.org/rfc/rfc8414#section-2
 */
const metadataRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/.well-known/oauth-authorization-server", { schema: { response: { 200: Metadata } } }, async () =>
    authorizationServerMetadata(app.signon.config.publicUrl),
  );
};

export default metadataRoutes;
