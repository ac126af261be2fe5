import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { safeReturnPath } from "../sign-in/start-sign-in.js";
import type { SignonUser, SignonUserDetails } from "../user.js";
import type { BrowserRoutePaths } from "./browser-routes.js";

const SignInQuery = Type.Object({ return_to: Type.Optional(Type.String({ maxLength: 2048 })) });

/** Says once, at start-up, that Sign-on is not asked and who everyone is. */
export function warnOfMockMode(app: FastifyInstance, user: SignonUserDetails): void {
  app.log.warn(
    { uid: user.uid, email: user.email, permissions: user.permissions },
    `Sign-on mock mode (mockUser): every request is signed in as ${user.name} without asking Sign-on; never use it in production`,
  );
}

/** The stand-in as the signed-in user of a browser session. */
export function mockSessionUser(user: SignonUserDetails): SignonUser {
  return { ...user, permissions: [...user.permissions], remotelySignedOut: false };
}

/**
 * The browser routes of mock mode, at the usual paths, none of which calls
 * Sign-on: every request is signed in already, so signing in goes straight
 * to `return_to`, and the callback and signing out go to `/`.
 */
export function mockBrowserRoutes(paths: BrowserRoutePaths) {
  return async function mockSignInRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    routes.get(paths.signIn, { schema: { querystring: SignInQuery } }, async (request, reply) =>
      reply.header("cache-control", "no-store").redirect(safeReturnPath(request.query.return_to), 302),
    );
    routes.get(paths.callback, async (_request, reply) => reply.header("cache-control", "no-store").redirect("/", 302));
    routes.get(paths.signOut, async (_request, reply) => reply.header("cache-control", "no-store").redirect("/", 302));
  };
}
