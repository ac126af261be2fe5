import { Type } from "@fastify/type-provider-typebox";

/** RFC 6749 §5.2 error body. */
export const OAuthErrorBody = Type.Object({ error: Type.String(), error_description: Type.Optional(Type.String()) });

/** Client credentials as form fields (S3). */
export const clientCredentialFields = {
  client_id: Type.Optional(Type.String({ maxLength: 512 })),
  client_secret: Type.Optional(Type.String({ maxLength: 512 })),
};

/** Error responses every client-authenticated endpoint can give. */
export const clientEndpointErrors = { 400: OAuthErrorBody, 401: OAuthErrorBody, 429: OAuthErrorBody, 500: OAuthErrorBody };
