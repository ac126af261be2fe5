import { DEFAULT_LAG_CHECK_INTERVAL_MS } from "@tessera/db";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { SignonConfig } from "../config.js";
import { ownCookie } from "./own-cookie.js";

/**
 * "This browser changed something a moment ago". Kept for as long as a replica
 * the lists may read can be behind: `DATABASE_READ_MAX_LAG_MS`, plus two of
 * the intervals between measures of its lag (the primary's position after
 * the change is sampled up to one interval later, and the replica is measured
 * against it up to one more after that).
 */
const recentWriteCookie = ownCookie("signon_recent_write", {
  sameSite: "lax",
  maxAgeSeconds: (config) => Math.ceil((config.databaseReadMaxLagMs + 2 * DEFAULT_LAG_CHECK_INTERVAL_MS) / 1000),
});

const readingMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Read-your-writes for the administrator pages while replicas serve the
 * lists: each change a signed-in person makes through a page that succeeds
 * (a POST answered below 400) sets the cookie, and while a browser holds it,
 * its lists read the primary (`wroteRecently`). An administrator who
 * suspends someone and goes back to the list sees them suspended, not as a
 * replica a second behind still has them. The cookie carries nothing: a
 * browser that forges it only sends its own reads to the primary.
 */
export function registerRecentWrites(app: FastifyInstance, config: SignonConfig): void {
  app.addHook("onSend", async (request, reply, payload) => {
    if (readingMethods.has(request.method) || reply.statusCode >= 400 || request.routeOptions.config.errorFormat !== "html") return payload;
    if (request.webSession === null || request.webSession.readOnly === true) return payload;
    recentWriteCookie.set(reply, config, "1");
    return payload;
  });
}

/**
 * Whether this browser changed something recently enough that a replica may
 * not have it yet (see `registerRecentWrites`), and the primary answers: while
 * it cannot be reached (the session was read on a replica), a replica's list
 * is the one there is.
 */
export function wroteRecently(request: FastifyRequest, config: SignonConfig): boolean {
  return recentWriteCookie.read(request, config) !== undefined && request.webSession?.readOnly !== true;
}
