import type { FastifyError, FastifyInstance } from "fastify";
import { Type, TypeBoxValidatorCompiler, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { SignonUserEnvelope } from "../user.js";
import type { SignonClient } from "../signon-client.js";
import { StoreUnavailableError } from "../errors.js";
import type { SignonGuards } from "./guards.js";
import { RETRY_AFTER_SECONDS } from "./unavailable.js";

/** The permission Sign-on's push credential holds on each application (S13). */
export const USER_UPDATE_PERMISSION = "user_update_permission";

const UidParams = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 255 }) });
const ApiError = Type.Object({ error: Type.String(), error_description: Type.String() });
const Empty = Type.Object({});

/**
 * The push receivers Sign-on calls (DECISIONS S13), under the plugin's API
 * prefix: `PUT /users/:uid` and `POST /users/:uid/reauth`. Both need a Sign-on
 * bearer token whose user holds `user_update_permission`; both answer `200 {}`.
 * Bad input is a 400 `invalid_request`, never a 500.
 *
 * @see /work/shared/spec/signon.md "Called by the service on each client application"
 */
export function receiverRoutes(client: SignonClient, guards: SignonGuards) {
  return async function receivers(app: FastifyInstance): Promise<void> {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    // TypeBox's own checker: no type coercion, so `"permissions": "admin"` is a 400, not `["admin"]`.
    api.setValidatorCompiler(TypeBoxValidatorCompiler);
    api.addHook("onRequest", guards.requireBearerToken([USER_UPDATE_PERMISSION]));
    api.setErrorHandler((error: FastifyError, request, reply) => {
      const status = error.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        return reply.code(status).send({ error: "invalid_request", error_description: error.message });
      }
      if (error instanceof StoreUnavailableError) {
        // Sign-on retries a 503 later (S14), by when the database is likely back.
        request.log.warn({ reason: error.message }, "push receiver: session store unavailable");
        return reply
          .code(503)
          .header("retry-after", String(RETRY_AFTER_SECONDS))
          .send({ error: "temporarily_unavailable", error_description: "The update could not be stored now; try again shortly." });
      }
      request.log.error({ err: error }, "push receiver failed");
      return reply.code(500).send({ error: "server_error", error_description: "The update could not be stored." });
    });

    api.put(
      "/users/:uid",
      {
        schema: {
          params: UidParams,
          body: SignonUserEnvelope,
          response: { 200: Empty, 400: ApiError, 401: ApiError, 403: ApiError, 503: ApiError },
        },
      },
      async (request, reply) => {
        if (request.body.user.uid !== request.params.uid) {
          return reply.code(400).send({
            error: "invalid_request",
            error_description: "The uid in the path and in the body differ.",
          });
        }
        await client.receiveUserUpdate(request.body.user);
        return {};
      },
    );

    api.post(
      "/users/:uid/reauth",
      {
        schema: {
          params: UidParams,
          response: { 200: Empty, 400: ApiError, 401: ApiError, 403: ApiError, 503: ApiError },
        },
      },
      async (request) => {
        await client.receiveReauth(request.params.uid);
        return {};
      },
    );
  };
}
