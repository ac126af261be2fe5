import type { FastifyRequest } from "fastify";

/** The absolute URL of a request, the base of `next` and `previous` links (C4). */
export function absoluteUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}${request.url}`;
}
