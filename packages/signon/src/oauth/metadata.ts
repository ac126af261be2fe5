/** How clients authenticate at the token, revocation and introspection endpoints (S3). */
export const clientAuthMethods = ["client_secret_basic", "client_secret_post"];

/**
 * The authorization server metadata of RFC 8414, as `/.well-known/oauth-authorization-server`
 * publishes it. The OpenID Connect discovery document is built on it, so the two agree.
 *
 * @see https://www.rfc-editor.org/rfc/rfc8414#section-2
 */
export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    introspection_endpoint: `${issuer}/oauth/introspect`,
    // The draft-22 profile's user details; OpenID Connect's discovery names `/userinfo` instead.
    userinfo_endpoint: `${issuer}/user.json`,
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    token_endpoint_auth_methods_supported: clientAuthMethods,
    revocation_endpoint_auth_methods_supported: clientAuthMethods,
    introspection_endpoint_auth_methods_supported: clientAuthMethods,
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
  };
}
