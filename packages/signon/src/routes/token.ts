import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { requireFormBody } from "../http/form-content-type.js";
import { requestOrigin } from "../http/request-origin.js";
import { logClientAuthenticationFlood } from "./oauth/flood-log.js";
import { readClientCredentials } from "../oauth/client-credentials.js";
import { InvalidRequestError, UnsupportedGrantTypeError } from "../oauth/errors.js";
import { exchangeAuthorizationCode } from "../oauth/exchange-code.js";
import { refreshAccessToken } from "../oauth/refresh-tokens.js";
import { signIdToken } from "../oidc/id-token.js";
import { clientCredentialFields, clientEndpointErrors } from "./oauth/schemas.js";

const TokenBody = Type.Object(
  {
    grant_type: Type.Optional(Type.String({ maxLength: 128 })),
    code: Type.Optional(Type.String({ maxLength: 512 })),
    redirect_uri: Type.Optional(Type.String({ maxLength: 2048 })),
    code_verifier: Type.Optional(Type.String({ maxLength: 128 })),
    refresh_token: Type.Optional(Type.String({ maxLength: 512 })),
    ...clientCredentialFields,
  },
  { additionalProperties: Type.String({ maxLength: 2048 }) },
);
type TokenBody = typeof TokenBody.static;

const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal("Bearer"),
  expires_in: Type.Integer(),
  refresh_token: Type.String(),
  created_at: Type.Integer(),
  // OpenID Connect grants only: the granted scopes and the ID token.
  scope: Type.Optional(Type.String()),
  id_token: Type.Optional(Type.String()),
});

const supportedGrantTypes = ["authorization_code", "refresh_token"] as const;

/** Step: `grant_type` is present and one we support (S2). */
export function checkGrantType(grantType: string | undefined): (typeof supportedGrantTypes)[number] {
  if (grantType === undefined || grantType === "") throw new InvalidRequestError("grant_type is required");
  const supported = supportedGrantTypes.find((type) => type === grantType);
  if (!supported) throw new UnsupportedGrantTypeError(`Supported grant types: ${supportedGrantTypes.join(", ")}`);
  return supported;
}

/**
 * `POST /token` (aliases `/oauth/token`, `/oauth/access_token`): client
 * authentication in the body or by HTTP Basic, then the `authorization_code`
 * or `refresh_token` grant. Responses are never cached (S4).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.2
 */
const tokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const handler = async (request: FastifyRequest<{ Body: TokenBody }>, reply: FastifyReply) => {
    reply.headers({ "cache-control": "no-store", pragma: "no-cache" });
    const { body } = request;
    const credentials = readClientCredentials({ authorization: request.headers.authorization, body });
    const grantType = checkGrantType(body.grant_type);
    const origin = requestOrigin(request);
    // The client is authenticated in the same statement as the grant's exchange.
    const client = { credentials, onFlood: logClientAuthenticationFlood(request.log) };
    const { application, issued } =
      grantType === "authorization_code"
        ? await exchangeAuthorizationCode(
            app.signon,
            client,
            { code: body.code, redirectUri: body.redirect_uri, codeVerifier: body.code_verifier },
            origin,
          )
        : await refreshAccessToken(app.signon, client, body.refresh_token, origin);
    if (issued.openid === null) return reply.code(200).send(issued.response);
    // OpenID Connect: an ID token beside the tokens (Core §3.1.3.3), on refresh too (§12.2).
    const idToken = await signIdToken(app.signon, {
      clientId: application.clientId,
      alg: application.idTokenSignedResponseAlg,
      userUid: issued.userUid,
      openid: issued.openid,
      accessToken: issued.response.access_token,
      now: new Date(issued.response.created_at * 1000),
      refresh: grantType === "refresh_token",
    });
    return reply.code(200).send({ ...issued.response, scope: issued.openid.scope, id_token: idToken });
  };
  const options = {
    preValidation: requireFormBody,
    schema: { body: TokenBody, response: { 200: TokenResponse, ...clientEndpointErrors } },
  };
  for (const path of ["/token", "/oauth/token", "/oauth/access_token"]) app.post(path, options, handler);
};

export default tokenRoutes;
