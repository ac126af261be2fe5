import type { FastifyInstance, onRequestAsyncHookHandler } from "fastify";
import fastifyPlugin from "fastify-plugin";
import { createBearerTokenVerifier, type BearerTokenVerifier } from "../bearer/bearer-token-verifier.js";
import type { BearerVerifierOptions } from "../config.js";
import { bearerTokenGuard } from "./guards.js";
import { warnOfMockMode } from "./mock-mode.js";

/** What the bearer plugin adds to the Fastify instance as `app.signonBearer`. */
export interface SignonBearerDecoration {
  verifier: BearerTokenVerifier;
  /** The `onRequest` guard of API routes; see `bearerTokenGuard`. */
  requireBearerToken(permissions?: readonly string[]): onRequestAsyncHookHandler;
}

declare module "fastify" {
  interface FastifyInstance {
    signonBearer: SignonBearerDecoration;
  }
}

async function signonBearer(app: FastifyInstance, options: BearerVerifierOptions): Promise<void> {
  const verifier = createBearerTokenVerifier(options);
  if (!app.hasRequestDecorator("signonApiUser")) app.decorateRequest("signonApiUser", null);
  app.decorate("signonBearer", {
    verifier,
    requireBearerToken: (permissions = []) => bearerTokenGuard((token) => verifier.verify(token), permissions, verifier.mockUser),
  });
  if (verifier.mockUser !== null) warnOfMockMode(app, verifier.mockUser);
}

/**
 * For services that only take API requests: checks Sign-on bearer tokens
 * (cached, see `BearerTokenVerifier`) without sign-in routes, sessions or
 * stores. Guard routes with `app.signonBearer.requireBearerToken([...])` and
 * read `request.signonApiUser`.
 */
export const signonBearerPlugin = fastifyPlugin(signonBearer, {
  fastify: "5.x",
  name: "@tessera/signon-client/bearer",
});
