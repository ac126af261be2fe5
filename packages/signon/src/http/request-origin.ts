import { isIP } from "node:net";
import type { FastifyRequest } from "fastify";
import type { RequestOrigin } from "../context.js";

/**
 * Where a request came from: the client IP (through a trusted proxy when
 * configured; `null` when a proxy header made it something that is not an
 * address) and the user agent.
 */
export function requestOrigin(request: FastifyRequest): RequestOrigin {
  const userAgent = request.headers["user-agent"];
  return { ip: isIP(request.ip) === 0 ? null : request.ip, userAgent: typeof userAgent === "string" ? userAgent : null };
}
