import { authorizationServerMetadata } from "../oauth/metadata.js";
import { amrValuesSupported, idTokenClaimsSupported } from "./id-token.js";
import { signingAlgorithms } from "./signing-keys.js";

/** The OpenID Connect scopes Sign-on knows; an application is registered for some of them. */
export const scopesSupported = ["openid", "profile", "email"] as const;

/** Where the OpenID Connect endpoints are, below the issuer. */
export const oidcPaths = {
  jwks: "/.well-known/jwks.json",
  userinfo: "/userinfo",
  endSession: "/end-session",
} as const;

/**
 * The OpenID Provider metadata (`/.well-known/openid-configuration`): the
 * RFC 8414 metadata of `/.well-known/oauth-authorization-server` (the same
 * endpoints and methods) with the OpenID Connect userinfo endpoint in place of
 * `/user.json`, and what Core, RP-Initiated Logout and Back-Channel Logout add.
 *
 * @see https://openid.net/specs/openid-connect-discovery-1_0.html#ProviderMetadata
 * @see https://openid.net/specs/openid-connect-rpinitiated-1_0.html#OPMetadata
 * @see https://openid.net/specs/openid-connect-backchannel-1_0.html#BCSupport
 */
export function openIdConfiguration(issuer: string) {
  return {
    ...authorizationServerMetadata(issuer),
    userinfo_endpoint: `${issuer}${oidcPaths.userinfo}`,
    jwks_uri: `${issuer}${oidcPaths.jwks}`,
    end_session_endpoint: `${issuer}${oidcPaths.endSession}`,
    scopes_supported: [...scopesSupported],
    response_modes_supported: ["query"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [...signingAlgorithms],
    claims_supported: idTokenClaimsSupported,
    amr_values_supported: [...amrValuesSupported],
    prompt_values_supported: ["none", "login", "consent", "select_account"],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: false,
  };
}
