import { Server as NetServer } from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";

/**
 * How long a drain waits for clients to send on, or let go of, their kept-alive connections (1 s): a balancer that
 * still sends does so within it; a client that keeps a connection idle only holds the stop up this long.
 */
export const DRAIN_GRACE_MS = 1000;

/**
 * Stops a listening app without cutting a request off, for SIGTERM during a rolling upgrade: it accepts no new
 * connection; the requests in flight finish; a request that arrives on a kept-alive connection is answered as
 * usual, with `Connection: close`, so that its client opens the next one elsewhere; once every connection has
 * closed, or after `graceMs` (when the idle ones are closed), the app closes as usual (its `onClose` hooks).
 *
 * Fastify's own `close()` closes idle kept-alive connections at once, and a request a client sends on one at that
 * moment is reset unread; one that arrives on a busy connection is answered 503. A balancer that has taken the
 * instance out sends nothing more either way; one that has not (yet) gets answers instead.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-9.6 (tear-down: `Connection: close`)
 */
export async function drainAndClose(app: FastifyInstance, graceMs = DRAIN_GRACE_MS): Promise<void> {
  const server = app.server;
  if (server.listening) {
    const closeAfterAnswer = (_request: IncomingMessage, response: ServerResponse) => response.setHeader("connection", "close");
    server.prependListener("request", closeAfterAnswer);
    // net.Server's close stops accepting without closing idle connections (http.Server's closes them at once); it
    // calls back once the last connection has ended.
    const drained = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
      timer.unref();
    });
    await Promise.race([drained, graceOver]);
    clearTimeout(timer);
    // Whatever is still open has sat idle through the grace, or is answering its last request (which then closes).
    server.closeIdleConnections();
    await drained;
  }
  await app.close();
}
