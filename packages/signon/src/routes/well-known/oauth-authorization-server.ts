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
  app.get("/.well-known/oauth-authorization-server", { schema: { response: { 200: Metadata } } }, async () => {
    const issuer = app.signon.config.publicUrl;
    const authMethods = ["client_secret_basic", "client_secret_post"];
    return {
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      introspection_endpoint: `${issuer}/oauth/introspect`,
      userinfo_endpoint: `${issuer}/user.json`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      token_endpoint_auth_methods_supported: authMethods,
      revocation_endpoint_auth_methods_supported: authMethods,
      introspection_endpoint_auth_methods_supported: authMethods,
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
    };
  });
};

export default metadataRoutes;
