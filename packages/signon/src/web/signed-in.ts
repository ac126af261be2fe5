import type { FastifyReply, FastifyRequest } from "fastify";
import { isDatabaseUnavailable } from "@tessera/db/faults";
import { resolveWebSession, resolveWebSessionOnReplica, type WebSession } from "../accounts/sessions.js";
import { readSessionCookie } from "../http/session-cookie.js";
import type { Actor } from "./policy.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The signed-in session, set by `requireSignedIn`. */
    webSession: WebSession | null;
  }
  interface FastifyContextConfig {
    /**
     * A list that reads where lag is tolerated (a replica, when configured):
     * while the primary cannot be reached, its session is read there too.
     */
    listRead?: boolean;
  }
}

/** Where a signed-in browser that must set up 2-step verification goes, coming back to `returnTo` once it is on. */
export function twoStepSetUpPath(returnTo: string): string {
  return `/account/two-step?return_to=${encodeURIComponent(returnTo)}`;
}

/**
 * preHandler for every page behind sign-in: sets `request.webSession`, or
 * sends the browser to the sign-in page (and back here afterwards). A session
 * still waiting for its 2-step code goes to the code page; a person who must
 * use 2-step verification and has not set it up goes to its set-up.
 */
export async function requireSignedIn(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await signedInGuard(request, reply, false);
}

/**
 * `requireSignedIn` for the 2-step set-up itself: the one page a person who
 * must set it up may use (besides signing out).
 */
export async function requireSignedInForTwoStepSetUp(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await signedInGuard(request, reply, true);
}

async function signedInGuard(request: FastifyRequest, reply: FastifyReply, settingUpTwoStep: boolean): Promise<void> {
  const session = await sessionOf(request);
  const returnTo = request.method === "GET" ? request.url : "/";
  if (session && !session.awaitingSecondFactor) {
    if (session.twoStepSetUpRequired && !settingUpTwoStep) {
      await reply.header("cache-control", "no-store").redirect(twoStepSetUpPath(returnTo), 303);
      return;
    }
    request.webSession = session;
    return;
  }
  const target = session ? "/sign-in/two-step" : "/sign-in";
  await reply.header("cache-control", "no-store").redirect(`${target}?return_to=${encodeURIComponent(returnTo)}`, 303);
}

/**
 * The request's session. While the primary cannot be reached, a list page
 * (route config `listRead`, a GET) takes it from a replica, read only (see
 * `resolveWebSessionOnReplica`); any other page gets the outage's 503.
 */
async function sessionOf(request: FastifyRequest): Promise<WebSession | null> {
  const ctx = request.server.signon;
  const sessionId = readSessionCookie(request, ctx.config);
  try {
    return await resolveWebSession(ctx, sessionId);
  } catch (error) {
    if (request.method !== "GET" || request.routeOptions.config.listRead !== true || !isDatabaseUnavailable(error)) throw error;
    const onReplica = await resolveWebSessionOnReplica(ctx, sessionId);
    if (onReplica === undefined) throw error;
    return onReplica;
  }
}

/** The signed-in user; only call after `requireSignedIn`. */
export function signedInUser(request: FastifyRequest): WebSession["user"] {
  if (!request.webSession) throw new Error("signedInUser called on a route without requireSignedIn");
  return request.webSession.user;
}

/**
 * preHandler factory: after `requireSignedIn`, answers 403 with the
 * forbidden page unless `rule` allows the signed-in user.
 */
export function requireRule(rule: (actor: Actor) => boolean) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (!rule(signedInUser(request))) await sendForbidden(reply);
  };
}

/** The 403 page. */
export async function sendForbidden(reply: FastifyReply): Promise<void> {
  await reply.code(403).header("cache-control", "no-store").view("not-allowed.eta", { title: "You cannot do that" });
}

/**
 * preHandler for a page open to everyone that shows the site navigation to
 * whoever is signed in: sets `request.webSession` when there is a finished
 * sign-in, and lets the request through either way.
 */
export async function useSessionIfAny(request: FastifyRequest): Promise<void> {
  const ctx = request.server.signon;
  const session = await resolveWebSession(ctx, readSessionCookie(request, ctx.config));
  request.webSession = session && !session.awaitingSecondFactor ? session : null;
}
