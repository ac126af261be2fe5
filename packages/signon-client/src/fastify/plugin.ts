import fastifyCookie from "@fastify/cookie";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fastifyPlugin from "fastify-plugin";
import type { SignonClientOptions } from "../config.js";
import { SignonClient } from "../signon-client.js";
import type { SignonUser, SignonUserDetails } from "../user.js";
import { browserRoutes } from "./browser-routes.js";
import { createGuards, type ForbiddenHandler, type SignonGuards } from "./guards.js";
import { mockBrowserRoutes, mockSessionUser, warnOfMockMode } from "./mock-mode.js";
import { escapeHtml, sendPage } from "./pages.js";
import { receiverRoutes, USER_UPDATE_PERMISSION } from "./receiver-routes.js";
import { SessionCookie } from "./session-cookie.js";
import { isTemporarilyUnavailable, sendTemporarilyUnavailable } from "./unavailable.js";

/** Options of the Fastify plugin: the client's options plus where things are mounted. */
export interface SignonPluginOptions extends SignonClientOptions {
  /** Prefix of the browser routes: `{prefix}` signs in, `{prefix}/sign_out` signs out. Default `/auth/gds`. */
  authPrefix?: string;
  /** Prefix of the push receivers; default `/auth/gds/api` (gds-sso's paths). */
  apiPrefix?: string;
  /** Name of the session cookie; default `signon_client_session` (not `signon_session`: Sign-on uses that, and browsers share cookies between ports of one host). */
  cookieName?: string;
  /** Mark the cookie `Secure`; default: when `redirectUri` is `https://`. */
  secureCookie?: boolean;
  /** Answers a signed-in user without a required permission; default a plain 403 page. */
  onForbidden?: ForbiddenHandler;
}

/** What the plugin adds to the Fastify instance as `app.signonClient`. */
export interface SignonDecoration extends SignonGuards {
  client: SignonClient;
  paths: { signIn: string; callback: string; signOut: string; api: string };
}

declare module "fastify" {
  interface FastifyInstance {
    signonClient: SignonDecoration;
  }
  interface FastifyRequest {
    /** The signed-in user of this browser session, or `null`. */
    signonUser: SignonUser | null;
    /** The user of the request's bearer token, set by `requireBearerToken`, else `null`. */
    signonApiUser: SignonUserDetails | null;
  }
}

const defaultForbidden: ForbiddenHandler = (_request, reply, required) =>
  sendPage(
    reply,
    403,
    "You do not have permission to see this page",
    `<p>It needs the ${required.map((p) => `<code>${escapeHtml(p)}</code>`).join(", ")} permission.</p>`,
  );

async function signonPlugin(app: FastifyInstance, options: SignonPluginOptions): Promise<void> {
  const client = new SignonClient(options);
  const authPrefix = trimSlash(options.authPrefix ?? "/auth/gds");
  const paths = {
    signIn: authPrefix,
    callback: new URL(client.config.redirectUri).pathname,
    signOut: `${authPrefix}/sign_out`,
    api: trimSlash(options.apiPrefix ?? `${authPrefix}/api`),
  };
  const cookie = new SessionCookie(
    options.cookieName ?? "signon_client_session",
    options.secureCookie ?? client.config.redirectUri.startsWith("https:"),
  );
  const guards = createGuards(client, paths.signIn, options.onForbidden ?? defaultForbidden);

  if (!app.hasRequestDecorator("cookies")) await app.register(fastifyCookie);
  app.decorate("signonClient", { client, paths, ...guards });
  app.decorateRequest("signonUser", null);
  if (!app.hasRequestDecorator("signonApiUser")) app.decorateRequest("signonApiUser", null);
  const mockUser = client.config.mockUser;
  if (mockUser !== null) warnOfMockMode(app, mockUser);
  app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
    if (mockUser !== null) {
      if (!request.url.startsWith(`${paths.api}/`)) request.signonUser = mockSessionUser(mockUser);
      return;
    }
    const sessionId = cookie.read(request);
    if (sessionId === undefined || request.url.startsWith(`${paths.api}/`)) return;
    try {
      const signedIn = await client.resolveSession(sessionId, request.log);
      request.signonUser = signedIn?.user ?? null;
    } catch (error) {
      if (!isTemporarilyUnavailable(error)) throw error;
      await sendTemporarilyUnavailable(request, reply, error);
    }
  });

  await app.register(mockUser === null ? browserRoutes(client, paths, cookie) : mockBrowserRoutes(paths));
  await app.register(
    receiverRoutes({
      guard: guards.requireBearerToken([USER_UPDATE_PERMISSION]),
      receiveUserUpdate: (user) => client.receiveUserUpdate(user),
      receiveReauth: (uid) => client.receiveReauth(uid),
    }),
    { prefix: paths.api },
  );
}

function trimSlash(path: string): string {
  return path.replace(/\/+$/, "");
}

/**
 * Makes a Fastify application a Sign-on client: the sign-in routes, the push
 * receivers, a server-side session resolved on every request into
 * `request.signonUser`, and the guards on `app.signonClient` (not
 * `app.signon`: Sign-on itself decorates that name).
 */
export const signonClientPlugin = fastifyPlugin(signonPlugin, { fastify: "5.x", name: "@tessera/signon-client" });
