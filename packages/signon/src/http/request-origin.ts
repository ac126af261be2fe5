import type { FastifyRequest } from "fastify";
import type { RequestOrigin } from "../context.js";

/** Where a request came from: the client IP (through a trusted proxy when configured) and user agent. */
export function requestOrigin(request: FastifyRequest): RequestOrigin {
  const userAgent = request.headers["user-agent"];
  return { ip: request.ip || null, userAgent: typeof userAgent === "string" ? userAgent : null };
}
