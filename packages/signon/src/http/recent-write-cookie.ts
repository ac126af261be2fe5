import { DEFAULT_LAG_CHECK_INTERVAL_MS, formatLsn, parseLsn, type ReadRouter } from "@tessera/db";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { SignonConfig } from "../config.js";
import type { OwnChange } from "../context.js";
import { ownCookie } from "./own-cookie.js";

/**
 * "This browser changed something a moment ago, and the primary's WAL was
 * here once it had". Kept for as long as a replica the lists may read can be
 * behind: `DATABASE_READ_MAX_LAG_MS`, plus two of the intervals between
 * measures of its lag (the primary's position after the change is sampled up
 * to one interval later, and the replica is measured against it up to one
 * more after that). After that, every replica within the limit holds it.
 */
const recentWriteCookie = ownCookie("signon_recent_write", {
  sameSite: "lax",
  maxAgeSeconds: (config) => Math.ceil((config.databaseReadMaxLagMs + 2 * DEFAULT_LAG_CHECK_INTERVAL_MS) / 1000),
});

/** The cookie's value where the primary's position could not be read: the primary serves the lists meanwhile. */
const positionUnknown = "primary";

/** A WAL position as PostgreSQL writes it (`16/B374D848`). */
const walPosition = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;

const readingMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Read-your-writes for the administrator pages while replicas serve the
 * lists: each change a signed-in person makes through a page that succeeds
 * (a POST answered below 400) sets the cookie to the primary's WAL position
 * after it, and while a browser holds it, its lists read a replica that has
 * replayed that far, or the primary (`ownRecentChange`). An administrator who
 * suspends someone and goes back to the list sees them suspended, not as a
 * replica a second behind still has them. The cookie is no secret: a browser
 * that forges it only sends its own reads to the primary.
 */
export function registerRecentWrites(app: FastifyInstance, config: SignonConfig, reads: ReadRouter): void {
  app.addHook("onSend", async (request, reply, payload) => {
    if (readingMethods.has(request.method) || reply.statusCode >= 400 || request.routeOptions.config.errorFormat !== "html") return payload;
    if (request.webSession === null || request.webSession.readOnly === true) return payload;
    const position = await reads.writePosition();
    recentWriteCookie.set(reply, config, position === null ? positionUnknown : formatLsn(position));
    return payload;
  });
}

/**
 * The change this browser made recently enough that a replica may not have it
 * yet (see `registerRecentWrites`), if any. None while the primary cannot be
 * reached (the session was read on a replica): a replica's list is the one
 * there is.
 */
export function ownRecentChange(request: FastifyRequest, config: SignonConfig): OwnChange | undefined {
  const value = recentWriteCookie.read(request, config);
  if (value === undefined || request.webSession?.readOnly === true) return undefined;
  return { after: walPosition.test(value) ? parseLsn(value) : null };
}
