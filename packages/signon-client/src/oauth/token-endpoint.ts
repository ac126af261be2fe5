import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { SignonClientConfig } from "../config.js";
import { SignonRefusedError, SignonUnavailableError } from "../errors.js";
import { signonRequestOptions } from "../http/request-options.js";
import { sendRequest } from "../http/send.js";

const TokenResponse = Type.Object({
  access_token: Type.String({ minLength: 1 }),
  token_type: Type.String(),
  expires_in: Type.Optional(Type.Number({ minimum: 0 })),
  refresh_token: Type.Optional(Type.String({ minLength: 1 })),
});
type TokenResponse = Static<typeof TokenResponse>;

const ErrorResponse = Type.Object({ error: Type.String() });

/** Access token lifetime assumed when Sign-on leaves `expires_in` out (its documented lifetime). */
const DEFAULT_EXPIRES_IN_SECONDS = 7200;

/** Tokens from a successful token request. */
export interface IssuedTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresInSeconds: number;
}

/**
 * Exchanges an authorization code for tokens, sending the PKCE verifier and the
 * client credentials in the form body (the profile's client authentication).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.3
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.5
 */
export function exchangeAuthorizationCode(
  config: SignonClientConfig,
  code: string,
  codeVerifier: string,
): Promise<IssuedTokens> {
  return requestTokens(config, {
    grant_type: "authorization_code",
    code,
    redirect_uri: config.redirectUri,
    code_verifier: codeVerifier,
  });
}

/**
 * Trades a refresh token for a new access token and (Sign-on rotates them) a
 * new refresh token. The old refresh token must not be used again.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 */
export function refreshAccessToken(config: SignonClientConfig, refreshToken: string): Promise<IssuedTokens> {
  return requestTokens(config, { grant_type: "refresh_token", refresh_token: refreshToken });
}

async function requestTokens(config: SignonClientConfig, grant: Record<string, string>): Promise<IssuedTokens> {
  const form = new URLSearchParams({ ...grant, client_id: config.clientId, client_secret: config.clientSecret });
  const options = signonRequestOptions(`POST ${config.paths.token}`, {
    baseUrl: config.signonUrl,
    headers: {
      accept: "application/json",
      "content-type": "application/x-www-form-urlencoded; charset=UTF-8",
    },
    data: form.toString(),
  });
  const response = await sendRequest(config.fetch, options, config.requestTimeoutMs);
  if (response.status === 200 && Value.Check(TokenResponse, response.json)) {
    return issuedTokens(response.json);
  }
  if ((response.status === 400 || response.status === 401) && Value.Check(ErrorResponse, response.json)) {
    throw new SignonRefusedError(response.json.error, response.status);
  }
  throw new SignonUnavailableError(`token endpoint answered HTTP ${response.status} without a usable body`);
}

function issuedTokens(body: TokenResponse): IssuedTokens {
  if (body.token_type.toLowerCase() !== "bearer") {
    throw new SignonUnavailableError(`token endpoint issued an unsupported token type`);
  }
  return {
    accessToken: body.access_token,
    refreshToken: body.refresh_token ?? null,
    expiresInSeconds: body.expires_in ?? DEFAULT_EXPIRES_IN_SECONDS,
  };
}
