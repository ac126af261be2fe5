import { createServer, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from "node:https";
import { TESSERA_VERSION } from "./version.js";

/** What {@link answerWhileStarting} returns: hands the port over to the service. */
export interface StartingPort {
  /** Stops answering and frees the port, for the service to listen on it right after. */
  release(): Promise<void>;
}

/** Seconds a client is asked to wait while the service starts. */
const STARTING_RETRY_AFTER_SECONDS = 5;

function answer(response: ServerResponse, status: number, body: Record<string, string>): void {
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    connection: "close",
    ...(status === 503 ? { "retry-after": String(STARTING_RETRY_AFTER_SECONDS) } : {}),
  });
  response.end(JSON.stringify(body));
}

/**
 * Answers on `host:port` while the service starts (waiting for its database,
 * migrating): `GET /healthcheck/live` 200 (with the version), so that a supervisor does not
 * restart a process that is only waiting, and everything else, readiness
 * included, 503 with `Retry-After`, so that no traffic is sent to it yet.
 *
 * With `https` (the service's own TLS settings) it answers over HTTPS, as the
 * service will, so that a probe over HTTPS finds it live while it starts.
 *
 * Port 0, or a port it cannot take, is left alone: the service's own listen
 * then reports the problem as it would have.
 */
export async function answerWhileStarting(host: string, port: number, https?: HttpsServerOptions): Promise<StartingPort> {
  if (port === 0) return { release: async () => {} };
  const handler = (request: { method?: string | undefined; url?: string | undefined }, response: ServerResponse): void => {
    const path = (request.url ?? "").split("?")[0];
    if (request.method === "GET" && path === "/healthcheck/live") answer(response, 200, { status: "ok", version: TESSERA_VERSION });
    else if (path === "/healthcheck/ready") answer(response, 503, { status: "starting", version: TESSERA_VERSION });
    else answer(response, 503, { error: "starting", message: "The service is starting; try again shortly." });
  };
  const server = https === undefined ? createServer(handler) : createHttpsServer(https, handler);
  const listening = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen({ host, port }, () => resolve(true));
  });
  if (!listening) return { release: async () => {} };
  return {
    release: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
