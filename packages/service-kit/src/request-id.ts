import { randomUUID } from "node:crypto";
import { LogController, type FastifyInstance, type FastifyServerOptions } from "fastify";
import { HEALTH_CHECK_PATHS } from "./health.js";

/** The header that carries a request id in and out. */
export const REQUEST_ID_HEADER = "x-request-id";

/** The key under which each log line of a request carries its id. */
export const REQUEST_ID_LOG_LABEL = "request_id";

const saneRequestId = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The id of a request: the incoming `X-Request-Id` when it is a sane token
 * (1 to 64 characters of `A-Z a-z 0-9 . _ -`), so a proxy's id follows the
 * request through; otherwise (absent, repeated, too long, other characters)
 * a new random UUID, so nothing a client sends can forge log structure.
 */
export function requestIdOf(request: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = request.headers[REQUEST_ID_HEADER];
  return typeof incoming === "string" && saneRequestId.test(incoming) ? incoming : randomUUID();
}

/** Paths polled by probes and scrapers every few seconds: their requests are not logged (failures still are). */
const quietPaths = new Set([...HEALTH_CHECK_PATHS, "/metrics"]);

/**
 * Fastify server options that give each request an id ({@link requestIdOf})
 * and put it on every log line of the request as `request_id`. Requests to
 * the health checks and `/metrics` get no "incoming request"/"request
 * completed" lines, which would otherwise drown the rest.
 */
export function requestIdServerOptions(): Pick<FastifyServerOptions, "genReqId" | "requestIdHeader" | "logController"> {
  return {
    // Not Fastify's own header handling: it would take any incoming value unchecked.
    requestIdHeader: false,
    genReqId: (request) => requestIdOf(request),
    logController: new LogController({
      requestIdLogLabel: REQUEST_ID_LOG_LABEL,
      disableRequestLogging: (request) => quietPaths.has(request.url.split("?")[0] ?? ""),
    }),
  };
}

/** Sends each request's id back in the `X-Request-Id` response header, on every response (errors and 404s included). */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook("onRequest", (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
