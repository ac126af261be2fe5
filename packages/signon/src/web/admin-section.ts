import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { RequestOrigin } from "../context.js";
import { requestOrigin } from "../http/request-origin.js";
import { renderPage } from "./page.js";
import type { Actor } from "./policy.js";
import { requireRule, requireSignedIn, signedInUser } from "./signed-in.js";

/**
 * Guards every route of an administration section (applications, API users,
 * organisations): the browser must be signed in, and `rule` must allow its
 * user, else 403 before anything else runs: before the body is read, so a
 * refused user gets 403 whatever they post (the CSRF check of a form comes
 * after). Call inside the section's plugin, before its routes.
 */
export function guardSection(app: FastifyInstance, rule: (actor: Actor) => boolean): void {
  app.addHook("onRequest", requireSignedIn);
  app.addHook("onRequest", requireRule(rule));
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether a path parameter can be an id (a UUID in lower case); anything else is a page that does not exist. */
export function isId(value: string): boolean {
  return uuidPattern.test(value);
}

/** The 404 page of the administration sections. */
export function sendNotFound(request: FastifyRequest, reply: FastifyReply, what: string): Promise<FastifyReply> {
  return renderPage(request, reply, "error.eta", { title: "Page not found", message: `There is no such ${what}. It may have been mistyped.` }, 404);
}

/** Who is acting, for audit events: the signed-in user and where the request came from. */
export function actorOf(request: FastifyRequest): { uid: string; origin: RequestOrigin } {
  return { uid: signedInUser(request).uid, origin: requestOrigin(request) };
}

export { formatTime } from "../time-format.js";
