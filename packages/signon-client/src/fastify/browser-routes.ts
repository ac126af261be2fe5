import type { FastifyInstance, FastifyReply } from "fastify";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { SignInRejectedError, SignonRefusedError, SignonUnavailableError, StoreUnavailableError } from "../errors.js";
import type { SignonClient } from "../signon-client.js";
import { escapeHtml, sendPage } from "./pages.js";
import type { SessionCookie } from "./session-cookie.js";
import { isTemporarilyUnavailable, RETRY_AFTER_SECONDS, sendTemporarilyUnavailable } from "./unavailable.js";

/** Where the browser routes live. */
export interface BrowserRoutePaths {
  /** Starts sign-in, e.g. `/auth/gds`. */
  signIn: string;
  /** The callback, the path of the registered redirect URI, e.g. `/auth/gds/callback`. */
  callback: string;
  /** Signs out here and sends the browser to Sign-on, e.g. `/auth/gds/sign_out`. */
  signOut: string;
}

const SignInQuery = Type.Object({ return_to: Type.Optional(Type.String({ maxLength: 2048 })) });
const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 1024 })),
  state: Type.Optional(Type.String({ maxLength: 1024 })),
  error: Type.Optional(Type.String({ maxLength: 1024 })),
});

/** The callback's query string carries the authorization code and `state`: its request logs show the path only. */
const logSerializers = {
  req: (request: { method: string; url: string }) => ({ method: request.method, url: request.url.split("?")[0] }),
};

/** The sign-in, callback and sign-out routes a browser goes through (gds-sso's paths by default). */
export function browserRoutes(client: SignonClient, paths: BrowserRoutePaths, cookie: SessionCookie) {
  return async function signInRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    // The session store or Sign-on out of reach while signing in or out: 503, not 500. Anything else goes to the application's handler.
    app.setErrorHandler((error, request, reply) => {
      if (isTemporarilyUnavailable(error)) return sendTemporarilyUnavailable(request, reply, error);
      throw error;
    });

    routes.get(paths.signIn, { schema: { querystring: SignInQuery } }, async (request, reply) => {
      // The new cookie replaces the old one, so the session it named could never be used again.
      const previous = cookie.read(request);
      if (previous !== undefined) await client.signOut(previous);
      const started = await client.startSignIn(request.query.return_to ?? "/");
      cookie.set(reply, started.sessionId, started.expiresAt);
      return reply.header("cache-control", "no-store").redirect(started.authorizationUrl, 302);
    });

    routes.get(paths.callback, { schema: { querystring: CallbackQuery }, logSerializers }, async (request, reply) => {
      try {
        const signedIn = await client.completeSignIn(cookie.read(request), request.query);
        cookie.set(reply, signedIn.sessionId, signedIn.expiresAt);
        request.log.info({ uid: signedIn.user.uid }, "signed in through Sign-on");
        return await reply.header("cache-control", "no-store").redirect(signedIn.returnTo, 302);
      } catch (error) {
        // A cookie that named no pending sign-in (a stale callback URL) may be a signed-in session: keep it.
        const cookieWasPending = !(error instanceof SignInRejectedError && error.reason === "no_sign_in_started");
        if (cookieWasPending) cookie.clear(reply);
        return signInFailed(reply, error, paths.signIn);
      }
    });

    routes.get(paths.signOut, async (request, reply) => {
      const sessionId = cookie.read(request);
      if (sessionId !== undefined) await client.signOut(sessionId);
      cookie.clear(reply);
      return reply.redirect(client.signonSignOutUrl, 302);
    });
  };
}

function signInFailed(reply: FastifyReply, error: unknown, signInPath: string): FastifyReply {
  const tryAgain = `<p><a href="${escapeHtml(signInPath)}">Sign in again</a></p>`;
  if (error instanceof SignInRejectedError || error instanceof SignonRefusedError) {
    reply.log.warn({ reason: error instanceof SignInRejectedError ? error.reason : error.error }, "sign-in rejected");
    return sendPage(reply, 400, "Sign-in failed", `<p>The sign-in could not be completed.</p>${tryAgain}`);
  }
  if (error instanceof SignonUnavailableError) {
    reply.log.error({ err: error }, "sign-in failed: Sign-on unavailable");
    void reply.header("retry-after", String(RETRY_AFTER_SECONDS));
    return sendPage(reply, 503, "Sign-on is unavailable", `<p>Please try again in a moment.</p>${tryAgain}`);
  }
  if (error instanceof StoreUnavailableError) {
    reply.log.warn({ reason: error.message }, "sign-in failed: session store unavailable");
    void reply.header("retry-after", String(RETRY_AFTER_SECONDS));
    return sendPage(reply, 503, "Temporarily unavailable", `<p>Please try again in a moment.</p>${tryAgain}`);
  }
  throw error;
}
