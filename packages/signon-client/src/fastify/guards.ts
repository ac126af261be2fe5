import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, preHandlerAsyncHookHandler } from "fastify";
import { bearerTokenFromHeader } from "../bearer/bearer-token-verifier.js";
import { SignonUnavailableError } from "../errors.js";
import { hasAllPermissions, hasAnyPermission } from "../permissions.js";
import type { SignonUserDetails } from "../user.js";
import type { SignonClient } from "../signon-client.js";
import { sendApiError } from "./bearer-errors.js";

/** What a guard does when a signed-in user lacks a permission. */
export type ForbiddenHandler = (request: FastifyRequest, reply: FastifyReply, required: readonly string[]) => unknown;

/** Route guards for browser pages (sessions) and API routes (bearer tokens). */
export interface SignonGuards {
  /** Browser pages: a request without a signed-in user is sent to sign in and back. */
  requireSignIn: preHandlerAsyncHookHandler;
  /** Browser pages: signed in and holding `permission`, else 403. */
  requirePermission(permission: string): preHandlerAsyncHookHandler;
  /** Browser pages: signed in and holding at least one of `permissions`, else 403. */
  requireAnyPermission(permissions: readonly string[]): preHandlerAsyncHookHandler;
  /** Browser pages: signed in and holding all of `permissions`, else 403. */
  requireAllPermissions(permissions: readonly string[]): preHandlerAsyncHookHandler;
  /**
   * API routes: a valid Sign-on bearer token whose user holds every one of
   * `permissions` (none by default). Sets `request.signonApiUser`. Use it as
   * an `onRequest` hook so it runs before the body is read.
   */
  requireBearerToken(permissions?: readonly string[]): onRequestAsyncHookHandler;
}

/** Builds the guards; `signInPath` is where a signed-out browser is sent. */
export function createGuards(client: SignonClient, signInPath: string, onForbidden: ForbiddenHandler): SignonGuards {
  const redirectToSignIn = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const returnTo = request.method === "GET" || request.method === "HEAD" ? request.url : "/";
    return reply.redirect(`${signInPath}?return_to=${encodeURIComponent(returnTo)}`, 302);
  };
  const requireUser =
    (allowed: (permissions: readonly string[]) => boolean, required: readonly string[]): preHandlerAsyncHookHandler =>
    async (request, reply) => {
      const user = request.signonUser;
      if (!user) {
        await redirectToSignIn(request, reply);
        return;
      }
      if (!allowed(user.permissions)) await onForbidden(request, reply, required);
    };
  return {
    requireSignIn: requireUser(() => true, []),
    requirePermission: (permission) => requireUser((p) => p.includes(permission), [permission]),
    requireAnyPermission: (permissions) =>
      requireUser((p) => hasAnyPermission({ permissions: p }, permissions), permissions),
    requireAllPermissions: (permissions) =>
      requireUser((p) => hasAllPermissions({ permissions: p }, permissions), permissions),
    requireBearerToken: (permissions = []) => bearerTokenGuard((token) => client.verifyBearerToken(token), permissions, client.config.mockUser),
  };
}

/**
 * An `onRequest` hook for API routes: a valid Sign-on bearer token whose user
 * holds every one of `permissions`, else the RFC 6750 error (401 without or
 * with a rejected token, 403 without a permission, 503 when Sign-on cannot be
 * asked). Sets `request.signonApiUser`. With a `mockUser` (mock mode), every
 * request is that user's, with a token or without, and only the permissions
 * are checked.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3
 */
export function bearerTokenGuard(
  verify: (token: string) => Promise<SignonUserDetails | null>,
  permissions: readonly string[] = [],
  mockUser: SignonUserDetails | null = null,
): onRequestAsyncHookHandler {
  return async function requireBearerToken(request, reply) {
    const token = bearerTokenFromHeader(request.headers.authorization);
    if (token === null && mockUser === null) {
      await sendApiError(reply, namesBearerScheme(request.headers.authorization) ? "invalid_request" : "missing_token");
      return;
    }
    let user: SignonUserDetails | null;
    try {
      user = mockUser ?? (await verify(token ?? ""));
    } catch (error) {
      if (!(error instanceof SignonUnavailableError)) throw error;
      request.log.warn({ err: error }, "bearer token check failed: Sign-on unavailable");
      await sendApiError(reply, "temporarily_unavailable");
      return;
    }
    if (user === null) {
      await sendApiError(reply, "invalid_token");
      return;
    }
    const missing = permissions.filter((permission) => !user.permissions.includes(permission));
    if (missing.length > 0) {
      await sendApiError(reply, "insufficient_scope", `The bearer token's user lacks: ${missing.join(", ")}.`);
      return;
    }
    request.signonApiUser = user;
  };
}

/** Whether an Authorization header is of the Bearer scheme at all, well-formed or not. */
function namesBearerScheme(header: string | undefined): boolean {
  return header !== undefined && /^\s*Bearer(\s|$)/i.test(header);
}
